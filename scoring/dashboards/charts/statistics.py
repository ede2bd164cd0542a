"""The comparison of systems: the omnibus and pairwise tests, effect sizes and the mixed model as a figure
and a table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...lib.session import SUMMARIES
from ...lib.statistics import (
    PAIRED_WHY,
    benjamini_hochberg,
    block_means,
    compare_systems,
    holm,
    p_text,
    paired_participant_means,
    verdict,
)
from .common import (
    SUMMARY_LABELS,
    Chart,
    empty_chart,
    format_value,
    interval_exported,
    interval_shown,
    number_text,
    palette_colour,
    rounded,
    system_groups,
)


def _effect_cells(effect) -> list:
    if effect is None:
        return ["", None, None, None]
    return [effect.name, effect.value, effect.low, effect.high]


def _mixed_rows(mixed) -> tuple[list[list], list[str]]:
    """The mixed model's system effects as CSV rows (the columns of statistics_chart) and their readings."""
    if mixed is None:
        return [], []
    notes = list(mixed.notes)
    rows = []
    name = "linear mixed model (sessions; participant and scenario random)"
    for e in mixed.effects:
        direction = "higher" if e.estimate > 0 else "lower"
        reading = (
            f"With each participant's and scenario's own level modelled as random ({mixed.n_sessions} "
            f"sessions, {mixed.n_participants} participants, {mixed.n_scenarios} scenarios), {e.second} "
            f"scores {number_text(abs(e.estimate), '.4g')} {direction} than {e.first} (95% CI "
            f"{number_text(e.low, '.4g')} to {number_text(e.high, '.4g')}); "
            f"the system effect {verdict(e.p_value)} ({p_text(e.p_value)})."
        )
        rows.append(
            [
                name,
                f"{e.first} vs {e.second}",
                e.estimate,
                interval_exported(e.low, e.high),
                e.p_value,
                mixed.n_sessions,
                reading,
                e.p_holm,
                e.p_bh,
                f"system effect ({e.second} minus {e.first})",
                e.estimate,
                e.low,
                e.high,
            ]
        )
        notes.append(reading)
    if mixed.fitted:
        variances = ", ".join(f"{k} {number_text(v, '.4g')}" for k, v in mixed.variances.items())
        notes.append(
            f"Mixed model {mixed.formula} (REML, statsmodels MixedLM, crossed variance components); "
            f"variances: {variances}."
        )
    return rows, notes


def statistics_chart(
    scores, *, summary: str, unit: str = "session", mixed=None, within: bool = False
) -> Chart:
    """The summary per system (box plots) and every test of scoring.lib.statistics, read in words, all on one
    unit: sessions (unpaired tests), or participants' or scenarios' means (paired tests, blocks with every
    system); with adjusted p-values, effect sizes with intervals, and the mixed model on the sessions
    themselves. `within` (a within-subject study): the block leads, whatever the unit, with the paired test
    of participant means, the design's own test, and says why."""
    if summary not in SUMMARIES:
        raise ValueError(f"unknown summary {summary!r}")
    label = SUMMARY_LABELS[summary]
    per = "session" if unit == "session" else f"{unit} (mean of its sessions)"
    title = f"{label.capitalize()} per {per}, by system"
    if not len(scores):
        return empty_chart(title)
    values = scores.summaries[summary]
    paired = unit != "session"
    blocks = scores.scenario if unit == "scenario" else scores.participant
    # The mixed model comes fitted (the registry caches it: it is the slow one, and the same for every unit).
    result = compare_systems(
        values,
        scores.system,
        blocks,
        summary=label,
        block=unit if paired else "participant",
        paired=paired,
        design=None if mixed is not None else (scores.participant, scores.scenario),
    )
    if mixed is not None:
        result.mixed = mixed
    data = _box_traces(scores, values, blocks, paired=paired)
    rows, mixed_notes = _result_rows(result, unit=unit, paired=paired)
    lead_notes: list[str] = []
    if within and len(set(np.asarray(scores.system).tolist())) > 1:
        pairs = paired_participant_means(values, scores.system, scores.participant, summary=label)
        rows = _paired_rows(pairs) + rows
        lead_notes = [PAIRED_WHY] + [pair.reading for pair in pairs]
        if not pairs:
            lead_notes.append("Fewer than two participants used two systems: no paired test of their means.")
    data.append(_results_table(rows))
    layout = {
        "title": {"text": title},
        "xaxis": {"domain": [0, 0.3]},
        "yaxis": {"title": {"text": label}},
        "showlegend": False,
        "height": 520 + 18 * len(rows),
    }
    notes = lead_notes + _statistics_notes(result, mixed_notes)
    return Chart({"data": data, "layout": layout}, list(STATISTICS_HEADER), rows, notes)


def _box_traces(scores, values, blocks, *, paired: bool) -> list[dict]:
    """One box per system: its sessions' values, or (paired) its blocks' means."""
    if paired:
        system_labels, _, matrix = block_means(values, scores.system, blocks)
        boxes = [
            (system, matrix[:, system_labels.index(system)]) for system, _ in system_groups(scores.system)
        ]
    else:
        boxes = [(system, values[members]) for system, members in system_groups(scores.system)]
    return [
        {
            "type": "box",
            "y": rounded(points),
            "name": system,
            "boxmean": "sd",
            "boxpoints": "all",
            "jitter": 0.4,
            "pointpos": 0,
            "marker": {"color": palette_colour(i), "size": 4},
            "xaxis": "x",
            "yaxis": "y",
        }
        for i, (system, points) in enumerate(boxes)
    ]


# The CSV columns of statistics_chart (its rows: the tests, the bootstrap differences, the mixed model).
STATISTICS_HEADER = [
    "test",
    "systems",
    "statistic",
    "df",
    "p_value",
    "n",
    "reading",
    "p_holm",
    "p_bh",
    "effect_size",
    "effect",
    "effect_low",
    "effect_high",
]


def _result_rows(result, *, unit: str, paired: bool) -> tuple[list[list], list[str]]:
    """The CSV rows (STATISTICS_HEADER) of the tests, the bootstrap differences and the mixed model's
    effects; and the mixed model's readings."""
    rows = [
        [
            t.test,
            t.systems,
            t.statistic,
            t.df,
            t.p_value,
            t.n,
            t.reading,
            t.p_holm,
            t.p_bh,
            *_effect_cells(t.effect),
        ]
        for t in result.tests
    ]
    unit_text = "sessions" if not paired else f"{unit} means"
    rows += [
        [
            f"mean difference, bootstrap 95% CI ({unit_text})",
            f"{d.first} vs {d.second}",
            d.mean_difference,
            interval_exported(d.low, d.high),
            None,
            d.n,
            d.reading,
            None,
            None,
            "",
            None,
            None,
            None,
        ]
        for d in result.differences
    ]
    mixed_rows, mixed_notes = _mixed_rows(result.mixed)
    rows += mixed_rows
    return rows, mixed_notes


# The names of the rows that lead a within-subject study's block (the CSV's "test" column).
PAIRED_T_ROW = "paired t-test of participant means (within-subject design)"
PAIRED_WILCOXON_ROW = "Wilcoxon signed-rank of participant means (within-subject design)"
PAIRED_CI_ROW = "mean difference of participant means, 95% t CI (within-subject design)"


def _adjusted(p: list[float]) -> list[tuple[float | None, float | None]]:
    """Holm and BH of a pairwise test's p over its pairs; (None, None) each when one pair is tested."""
    if len(p) < 2:
        return [(None, None)] * len(p)
    return [
        (None if np.isnan(h) else float(h), None if np.isnan(b) else float(b))
        for h, b in zip(holm(p), benjamini_hochberg(p), strict=True)
    ]


def _paired_rows(pairs) -> list[list]:
    """The CSV rows (STATISTICS_HEADER) of the paired test of participant means, each pair's paired t (with
    d_z), Wilcoxon signed-rank (the df cell says exact or normal approximation) and mean difference with its
    95% t interval."""
    t_adjusted = _adjusted([pair.p_t for pair in pairs])
    w_adjusted = _adjusted([pair.p_wilcoxon for pair in pairs])
    rows: list[list] = []
    for pair, (t_holm, t_bh), (w_holm, w_bh) in zip(pairs, t_adjusted, w_adjusted, strict=True):
        systems = f"{pair.first} vs {pair.second}"
        n = pair.n_pairs
        rows.append(
            [
                PAIRED_T_ROW,
                systems,
                pair.t,
                str(pair.df),
                pair.p_t,
                n,
                f"Paired by participant ({n} participants with both systems), {pair.second} minus "
                f"{pair.first} {verdict(pair.p_t)} ({p_text(pair.p_t)}).",
                t_holm,
                t_bh,
                *_effect_cells(pair.d_z),
            ]
        )
        rows.append(
            [
                PAIRED_WILCOXON_ROW,
                systems,
                pair.wilcoxon,
                pair.wilcoxon_method,
                pair.p_wilcoxon,
                n,
                f"Without assuming normal differences ({pair.wilcoxon_method} p, {pair.n_wilcoxon} of {n} "
                f"participants with a non-zero difference ranked), {pair.second} against {pair.first} "
                f"{verdict(pair.p_wilcoxon)} ({p_text(pair.p_wilcoxon)}).",
                w_holm,
                w_bh,
                *_effect_cells(None),
            ]
        )
        rows.append(
            [
                PAIRED_CI_ROW,
                systems,
                pair.mean_difference,
                interval_exported(pair.low, pair.high),
                None,
                n,
                pair.reading,
                None,
                None,
                *_effect_cells(None),
            ]
        )
    return rows


def _effect_text(row: list) -> str:
    """A CSV row's effect size and its interval, as the table shows them."""
    if not row[9] or row[10] is None or not np.isfinite(row[10]):
        return "" if not row[9] else f"{row[9]}: not defined"
    interval = interval_shown(row[11], row[12])
    return f"{row[9]} {number_text(row[10], '.3g')}" + (f" {interval}" if interval else "")


def _df_or_interval_shown(cell) -> str:
    """The "df / CI" cell as the table shows it: a test's degrees of freedom, or an interval's bounds rounded
    (the CSV's cell holds them at full precision, as interval_exported wrote them)."""
    if isinstance(cell, str) and cell.startswith("["):
        low, high = (float(bound) for bound in cell.strip("[]").split(","))
        return interval_shown(low, high)
    return format_value(cell)


def _results_table(rows: list[list]) -> dict:
    """The CSV rows as the Plotly table beside the boxes: numbers shortened, the effect size in words."""
    table_rows = [
        [
            r[0],
            r[1],
            format_value(r[2]),
            _df_or_interval_shown(r[3]),
            format_value(r[4]),
            format_value(r[7]),
            format_value(r[8]),
            _effect_text(r),
            r[5],
        ]
        for r in rows
    ]
    columns: list[Sequence] = list(zip(*table_rows, strict=True)) if table_rows else [[]] * 9
    return {
        "type": "table",
        "domain": {"x": [0.36, 1.0], "y": [0, 1]},
        "header": {
            "values": [
                "test",
                "systems",
                "statistic",
                "df / CI",
                "p",
                "p Holm",
                "p BH",
                "effect size [95% CI]",
                "n",
            ],
            "align": "left",
            "fill": {"color": "#e8f0fe"},
        },
        "cells": {"values": [list(c) for c in columns], "align": "left", "font": {"size": 11}},
        "columnwidth": [3, 1.2, 0.9, 1.4, 0.8, 0.8, 0.8, 2.2, 0.5],
    }


def _statistics_notes(result, mixed_notes: list[str]) -> list[str]:
    """The figure in words: each test's and difference's reading, the effect sizes, how to read the adjusted
    p-values, and the mixed model's readings."""
    notes = result.notes + [t.reading for t in result.tests] + [d.reading for d in result.differences]
    effects = [
        f"{t.systems if t.systems != 'all' else 'all systems'}: {t.effect.text()} ({t.effect.method})"
        for t in result.tests
        if t.effect is not None
    ]
    if effects:
        notes.append("Effect sizes with 95% intervals: " + "; ".join(effects) + ".")
    if any(t.p_holm is not None for t in result.tests):
        notes.append(
            "p Holm and p BH: each pairwise test's p adjusted over its pairs (Holm's step-down for the "
            "family-wise error, Benjamini-Hochberg for the false discovery rate); read those when "
            "several pairs are compared."
        )
    notes += mixed_notes
    return notes
