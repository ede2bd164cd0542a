"""Formatting of assessment figures for the pages (kappas, alphas, percentages)."""

from __future__ import annotations

import math


def score_text(value: float | None) -> str:
    """A kappa or alpha for a page: three decimals, "n/a" when undefined."""
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"


def percent_text(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{100 * value:.0f}%"


class Texts:
    """`obj.text.<field>`: the field formatted for a page (percent for `percent`, else score_text)."""

    @property
    def text(self) -> dict[str, str]:
        return {
            name: percent_text(value) if name == "percent" else score_text(value)
            for name, value in vars(self).items()
            if isinstance(value, float)
        }
