"""Sensitivity: how a summary moves with the rank and query log bases b and bq."""

from __future__ import annotations

import numpy as np

from ...lib.session import SUMMARIES
from .common import SUMMARY_LABELS, UNIT_WORDS, Chart, empty_chart, number_text, rounded, unit_keys


def sensitivity_chart(
    scores,
    *,
    grid_b,
    grid_bq,
    summary: str,
    first: str,
    second: str,
    b: float,
    bq: float,
    unit: str = "session",
) -> Chart:
    """Heatmap of mean(second) - mean(first) on a summary over the run's (b, bq) grid: over sessions, or over
    the participants (scenarios) that used both systems, each one's sessions averaged first (as the paired
    tests of the statistics card do with the same unit)."""
    if summary not in SUMMARIES:
        raise ValueError(f"unknown summary {summary!r}")
    label = SUMMARY_LABELS[summary]
    title = (
        f"{second} minus {first}: mean {label} over {UNIT_WORDS[unit]}, by b (rank) and bq (query) log bases"
    )
    systems = np.asarray(scores.system)
    a, c = systems == first, systems == second
    if not a.any() or not c.any():
        return empty_chart(title, f"Needs sessions of both {first} and {second}.")
    values = scores.grid[..., SUMMARIES.index(summary)].astype(np.float64)  # (S, nb, nbq)
    diff = _grid_difference(scores, values, a, c, unit=unit)
    if diff is None:
        return empty_chart(title, f"No {unit} has sessions on both {first} and {second}.")
    limit = float(np.abs(diff).max()) or 1.0
    data = [
        {
            "type": "heatmap",
            "x": [f"{v:g}" for v in grid_bq],
            "y": [f"{v:g}" for v in grid_b],
            "z": [rounded(row) for row in diff],
            "colorscale": "RdBu",
            "zmid": 0,
            "zmin": -limit,
            "zmax": limit,
            "colorbar": {"title": {"text": "difference"}},
            "hovertemplate": "b %{y}, bq %{x}: %{z:.4g}<extra></extra>",
        }
    ]
    layout = {
        "title": {"text": title},
        "xaxis": {"title": {"text": "bq (query discount base)"}, "type": "category"},
        "yaxis": {"title": {"text": "b (rank discount base)"}, "type": "category"},
        "annotations": _this_run(grid_b, grid_bq, b=b, bq=bq),
    }
    rows = [
        [float(vb), float(vq), float(diff[i, j])]
        for i, vb in enumerate(grid_b)
        for j, vq in enumerate(grid_bq)
    ]
    positive = int((diff > 0).sum())
    notes = [
        f"{second} is ahead of {first} at {positive} of {diff.size} (b, bq) settings; the difference ranges "
        f"from {number_text(diff.min(), '.4g')} to {number_text(diff.max(), '.4g')}."
    ]
    return Chart({"data": data, "layout": layout}, ["b", "bq", f"mean_{summary}_difference"], rows, notes)


def _grid_difference(
    scores, values: np.ndarray, a: np.ndarray, c: np.ndarray, *, unit: str
) -> np.ndarray | None:
    """Mean of the second system's (mask c) grids less the first's (mask a), (nb, nbq): over sessions, or over
    the units that used both, each unit's sessions averaged first; None when no unit used both."""
    if unit == "session":
        return values[c].mean(axis=0) - values[a].mean(axis=0)
    keys = unit_keys(scores, unit)
    both = sorted({keys[i] for i in np.flatnonzero(a)} & {keys[i] for i in np.flatnonzero(c)}, key=str)
    if not both:
        return None

    def per_unit(mask):
        by_key = {key: [] for key in both}
        for i in np.flatnonzero(mask):
            if keys[i] in by_key:
                by_key[keys[i]].append(i)
        return np.stack([values[by_key[key]].mean(axis=0) for key in both])

    return (per_unit(c) - per_unit(a)).mean(axis=0)


def _this_run(grid_b, grid_bq, *, b: float, bq: float) -> list[dict]:
    """The arrow at the run's own (b, bq), when the grid has it."""
    annotations = []
    if b in grid_b and bq in grid_bq:
        # On a category axis a number is a category's index (a label like "4" would be read as an index too).
        annotations.append(
            {
                "x": list(grid_bq).index(bq),
                "y": list(grid_b).index(b),
                "text": "this run",
                "showarrow": True,
                "arrowhead": 2,
                "font": {"color": "#000"},
            }
        )
    return annotations
