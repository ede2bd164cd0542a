"""Meta-evaluation: the measures against the participants' post-task ratings, and the systems' rankings by
each measure."""

from __future__ import annotations

import numpy as np

from ...lib.meta_evaluation import ALL_SYSTEMS, COEFFICIENT_LABELS
from ...lib.statistics import p_text
from .common import Chart, empty_chart, format_value, number_text, palette_colour


def meta_evaluation_chart(
    result, *, rating: str, rating_label: str, coefficient: str, labels: dict[str, str], unit: str = "session"
) -> Chart:
    """Each measure against one post-task rating (the `rating` option), one coefficient at a time (the chart),
    with a bootstrap 95% interval, over all systems and per system; the table under it and the CSV give every
    rating, both coefficients and the adjusted p-values."""
    word = COEFFICIENT_LABELS[coefficient]
    title = f"{word} of each measure with the rating “{rating_label}”, per {unit} (95% bootstrap CI)"
    header = list(META_HEADER)
    rows = [
        [
            a.scope,
            a.measure,
            a.rating,
            a.coefficient,
            a.n,
            a.value,
            a.low,
            a.high,
            a.p_value,
            a.p_holm,
            a.p_bh,
        ]
        for a in result.correlations
    ]
    shown = [a for a in result.correlations if a.rating == rating and a.coefficient == coefficient]
    if not shown:
        chart = empty_chart(title, result.notes[0] if result.notes else "No measure and rating to correlate.")
        chart.header, chart.rows, chart.notes = header, rows, list(result.notes)
        return chart
    measures = list(dict.fromkeys(a.measure for a in shown))
    scopes = list(dict.fromkeys(a.scope for a in shown))
    data = [
        _scope_trace(index, scope, shown, measures=measures, labels=labels, word=word)
        for index, scope in enumerate(scopes)
    ]
    data.append(_correlations_table(shown, word=word))
    layout = {
        "title": {"text": title},
        "xaxis": {"title": {"text": word}, "range": [-1.05, 1.05], "zeroline": True, "anchor": "y"},
        "yaxis": {"domain": [0.52, 1], "type": "category", "automargin": True, "autorange": "reversed"},
        "height": 520 + 22 * (len(shown) + len(measures)),
        # The table is the bottom of the figure: no room kept under it for an axis (charts.js fits it).
        "margin": {"b": 10},
    }
    notes = _meta_notes(result, shown, rating_label=rating_label, labels=labels, word=word, unit=unit)
    return Chart({"data": data, "layout": layout}, header, rows, notes)


# The CSV columns of meta_evaluation_chart: one row per correlation, every rating and coefficient.
META_HEADER = [
    "scope",
    "measure",
    "rating",
    "coefficient",
    "n",
    "value",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "p_bh",
]


def _scope_trace(
    index: int, scope: str, shown: list, *, measures: list, labels: dict[str, str], word: str
) -> dict:
    """One scope's (all systems, or one system) coefficients of every measure, with their intervals."""
    mine = {a.measure: a for a in shown if a.scope == scope}
    values = [mine[m].value for m in measures]
    finite = [np.isfinite(v) for v in values]
    return {
        "type": "scatter",
        "mode": "markers",
        "name": scope,
        "orientation": "h",
        "x": [round(v, 6) if ok else None for v, ok in zip(values, finite, strict=True)],
        "y": measures,
        "xaxis": "x",
        "yaxis": "y",
        "marker": {
            "color": palette_colour(index) if scope != ALL_SYSTEMS else "#000",
            "size": 9,
            "symbol": "diamond" if scope == ALL_SYSTEMS else "circle",
        },
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": [
                round(mine[m].high - mine[m].value, 6) if ok else None
                for m, ok in zip(measures, finite, strict=True)
            ],
            "arrayminus": [
                round(mine[m].value - mine[m].low, 6) if ok else None
                for m, ok in zip(measures, finite, strict=True)
            ],
        },
        "text": [labels.get(m, m) for m in measures],
        "hovertemplate": "%{text}<br>" + scope + f": {word} " + "%{x:.3f}<extra></extra>",
    }


def _correlations_table(shown: list, *, word: str) -> dict:
    """The correlations drawn, as the Plotly table under the chart."""
    table = [
        [
            a.scope,
            a.measure,
            a.n,
            format_value(a.value),
            "" if not np.isfinite(a.low) else f"[{number_text(a.low, '.3f')}, {number_text(a.high, '.3f')}]",
            format_value(a.p_value),
            format_value(a.p_holm),
            format_value(a.p_bh),
        ]
        for a in shown
    ]
    return {
        "type": "table",
        "domain": {"x": [0, 1], "y": [0, 0.42]},
        "header": {
            "values": ["scope", "measure", "n", word, "95% CI", "p", "p Holm", "p BH"],
            "align": "left",
            "fill": {"color": "#e8f0fe"},
        },
        "cells": {
            "values": [list(c) for c in zip(*table, strict=True)],
            "align": "left",
            "font": {"size": 11},
        },
    }


def _meta_notes(
    result, shown: list, *, rating_label: str, labels: dict[str, str], word: str, unit: str
) -> list[str]:
    """The chart in words: the library's notes, the measure that agrees best over all systems, and how the
    p-values and intervals were computed."""
    notes = list(result.notes)
    overall = [a for a in shown if a.scope == ALL_SYSTEMS and np.isfinite(a.value)]
    if overall:
        best = max(overall, key=lambda a: a.value)
        notes.append(
            f"Over all systems, {labels.get(best.measure, best.measure)} agrees best with “{rating_label}” "
            f"({word} {number_text(best.value, '.3f')}, 95% CI {number_text(best.low, '.3f')} to "
            f"{number_text(best.high, '.3f')}, {best.n} {unit}s; "
            f"{p_text(best.p_holm)} after Holm's correction over the {len(overall)} measures)."
        )
    notes.append(
        "p Holm and p BH: adjusted over every (measure, rating) pair of one scope and one coefficient. "
        "Intervals: percentile bootstrap of the sessions (2,000 seeded resamples)."
    )
    return notes


def meta_rankings_chart(result, *, labels: dict[str, str]) -> Chart:
    """Kendall's tau between the system rankings each measure (and each rating) gives: a heatmap, the pairs in
    the CSV, each ranking in the notes."""
    title = "Kendall's tau between the rankings of the systems by each measure and rating"
    header = ["first", "second", "kendall_tau", "p_value", "systems"]
    rows = [[r.first, r.second, r.tau, r.p_value, r.systems] for r in result.rankings]
    rankers = list(result.system_means)
    notes = [
        f"Ranking by {labels.get(name, name)}: "
        + " > ".join(
            f"{s} ({number_text(v, '.4g')})"
            for s, v in sorted(means.items(), key=lambda kv: -kv[1])
            if np.isfinite(v)
        )
        for name, means in result.system_means.items()
    ]
    notes += [n for n in result.notes if "system" in n]
    if not result.rankings:
        chart = empty_chart(title, "Needs two systems or more.")
        chart.header, chart.rows, chart.notes = header, rows, notes
        return chart
    tau = {(r.first, r.second): r.tau for r in result.rankings}
    z = [[1.0 if a == b else tau.get((a, b), tau.get((b, a))) for b in rankers] for a in rankers]
    z = [[None if v is None or not np.isfinite(v) else round(v, 6) for v in row] for row in z]
    data = [
        {
            "type": "heatmap",
            "x": rankers,
            "y": rankers,
            "z": z,
            "zmin": -1,
            "zmax": 1,
            "zmid": 0,
            "colorscale": "RdBu",
            "colorbar": {"title": {"text": "tau"}},
            "hovertemplate": "%{y} / %{x}: tau %{z:.3f}<extra></extra>",
        }
    ]
    layout = {
        "title": {"text": title},
        "xaxis": {"type": "category", "automargin": True},
        "yaxis": {"type": "category", "automargin": True, "autorange": "reversed"},
        "height": 360 + 24 * len(rankers),
    }
    return Chart({"data": data, "layout": layout}, header, rows, notes)
