"""Tables 1 and 2 (the participants, the query counts) as Plotly tables sized to their text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .common import (
    UNIT_WORDS,
    Chart,
    number_text,
    system_groups,
    system_label,
    unit_keys,
    unit_means,
)

TABLE_LINE_PX = 18  # a line of a table cell at Plotly's default 12 px font


TABLE_PAD_PX = 12  # a cell's padding, top and bottom together


TABLE_WIDTH_PX = 640  # the narrowest width a table is planned for: wider screens only leave room below it


TABLE_TITLE_PX = 100  # the title and the averaging line under it (charts.annotate)


def _lines(text, width_px: float) -> int:
    """Lines a cell's text takes in a column `width_px` wide (about 7 px a character at 12 px)."""
    per_line = max(4, int(width_px / 7))
    return sum(max(1, -(-len(part) // per_line)) for part in str(text).split("<br>"))


def table_height(header: list[str], rows: list[list], weights: list[float] | None = None) -> int:
    """The height a Plotly table needs for all its rows, wrapped text included, at TABLE_WIDTH_PX: set on the
    figure, so that the table is never cut off inside a fixed-height chart (nor a short one stretched)."""
    weights = weights or [1.0] * len(header)
    widths = [TABLE_WIDTH_PX * w / sum(weights) for w in weights]

    def row_px(cells) -> int:
        return TABLE_PAD_PX + TABLE_LINE_PX * max(
            (_lines(c, w) for c, w in zip(cells, widths, strict=True)), default=1
        )

    return TABLE_TITLE_PX + row_px(header) + sum(row_px(r) for r in rows) + 20


def _table_figure(
    title: str, header: list[str], rows: list[list], weights: list[float] | None = None
) -> dict:
    columns: list[Sequence] = list(zip(*rows, strict=True)) if rows else [[] for _ in header]
    table: dict[str, object] = {
        "type": "table",
        "header": {"values": header, "align": "left", "fill": {"color": "#e8f0fe"}},
        "cells": {"values": [list(c) for c in columns], "align": "left"},
    }
    if weights:
        table["columnwidth"] = weights
    return {
        "data": [table],
        "layout": {
            "title": {"text": title},
            "height": table_height(header, rows, weights),
            "margin": {"t": TABLE_TITLE_PX - 10, "b": 10, "l": 20, "r": 20},
        },
    }


NUMERIC_KINDS = ("integer", "scale", "number", "float")


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _choice_options(item: dict, answers: list[dict]) -> list:
    """A choice item's options in the questionnaire's order, then any other answer given (an "other" text)."""
    options = list(item.get("choices") or [])
    seen = {str(o) for o in options}
    for a in answers:
        value = a.get(item["name"])
        if value not in (None, "") and str(value) not in seen:
            seen.add(str(value))
            options.append(value)
    return options


def _feature_rows(item: dict, answers: list[dict], group: str, options: list) -> list[list]:
    """The CSV rows (PARTICIPANTS_HEADER) of one item over one group's answers: a numeric item's mean, sd
    and n; a choice item's count and percent per option (of the n who answered it), the same options for
    every group."""
    label = item.get("label", item["name"])
    if item.get("kind") in NUMERIC_KINDS:
        values = np.asarray([a[item["name"]] for a in answers if _number(a.get(item["name"]))], dtype=float)
        sd = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
        mean = float(values.mean()) if len(values) else float("nan")
        return [[label, mean, sd, len(values), "", None, None, group]]
    given = [a.get(item["name"]) for a in answers if a.get(item["name"]) not in (None, "")]
    n = len(given)
    rows = []
    for option in options:
        count = sum(1 for value in given if str(value) == str(option))
        rows.append(
            [label, None, None, n, str(option), count, 100.0 * count / n if n else float("nan"), group]
        )
    return rows


# The CSV columns of Table 1: one row per numeric item (mean, sd, n) or per option of a choice item (count,
# percent of the n who answered it), for all the population's participants ("all") and for those assigned
# each system (a within-subject design assigns everyone every system; a between-subjects one, its arm).
PARTICIPANTS_HEADER = ["feature", "mean", "sd", "n", "option", "count", "percent", "group"]


def participants_table(
    answers: list[dict],
    items: list[dict],
    systems: list[tuple[str, ...]] | None = None,
    system_codes: list[str] | None = None,
    names: dict[str, str] | None = None,
    in_population: int | None = None,
) -> Chart:
    """Table 1: each numeric questionnaire item's mean and standard deviation, and each choice item's count
    and percent per option, over the participants and per system (arm) they were assigned; `systems` gives
    each answering participant's systems (none: no per-system columns)."""
    groups: list[tuple[str, list[dict]]] = [("all", answers)]
    for code in system_codes or []:
        members = [a for a, own in zip(answers, systems or [], strict=False) if code in own]
        groups.append((code, members))
    rows: list[list] = []
    shown: list[list] = []
    for item in items:
        if item.get("kind") not in (*NUMERIC_KINDS, "choice"):
            continue
        options = _choice_options(item, answers) if item.get("kind") == "choice" else []
        per_group = [_feature_rows(item, members, group, options) for group, members in groups]
        rows += [row for group_rows in per_group for row in group_rows]
        for line in zip(*per_group, strict=True):
            first = line[0]
            feature = first[0] if first[4] == "" else f"{first[0]}: {first[4]}"
            shown.append([feature, *(_cell(row) for row in line)])
    header = ["Feature"] + [
        f"All (N = {len(members)})"
        if group == "all"
        else f"{system_label(group, names)} (n = {len(members)})"
        for group, members in groups
    ]
    figure = _table_figure(
        f"Participant features (N = {len(answers)}"
        + (
            f" who answered, of the {in_population} participants in the population)"
            if in_population is not None and in_population != len(answers)
            else ")"
        ),
        header,
        shown,
        weights=[4] + [1.6] * len(groups),
    )
    return Chart(figure, list(PARTICIPANTS_HEADER), rows)


def _cell(row: list) -> str:
    """A Table 1 cell: "4.2 ± 1.3 (n = 8)" for a numeric item, "3 (37.5%)" for a choice's option."""
    if row[4] == "":
        if row[3] == 0:
            return "—"
        sd = "" if row[2] != row[2] else f" ± {number_text(row[2], '.1f')}"
        return f"{number_text(row[1], '.1f')}{sd} (n = {row[3]})"
    percent = "—" if row[6] != row[6] else f"{number_text(row[6], '.1f')}%"
    return f"{row[5]} ({percent})"


def query_counts_table(scores, *, unit: str = "session", names: dict[str, str] | None = None) -> Chart:
    """Table 2: sessions by their number of queries, per system, and the mean number of queries per session
    (per participant's or scenario's sessions first, if that is the unit)."""
    top = int(scores.n_queries.max()) if len(scores) else 0
    rows: list[list] = []
    keys = unit_keys(scores, unit)
    queries = scores.n_queries.astype(np.float64)[:, None]
    for system, members in system_groups(scores.system):
        counts = np.bincount(scores.n_queries[members], minlength=top + 1)[1:]
        mean = float(unit_means(queries, members, keys).mean())
        rows.append([system, len(members), *[int(c) for c in counts], mean])
    header = ["system", "sessions", *[str(n) for n in range(1, top + 1)], "mean_per_session"]
    shown = [[system_label(r[0], names), *r[1:-1], number_text(r[-1], ".2f")] for r in rows]
    figure = _table_figure(
        f"Sessions by number of queries, and the average per session over {UNIT_WORDS[unit]}",
        [
            "System",
            "Sessions",
            *[f"{n} query" if n == 1 else str(n) for n in range(1, top + 1)],
            "Avg per session",
        ],
        shown,
        weights=[4, 1.2, *[0.8] * top, 1.4],
    )
    return Chart(figure, header, rows)


def attention_table(scores, attention, *, seen_ms: int, names: dict[str, str] | None = None) -> Chart:
    """What was on screen and when participants were away, per system: over the sessions that
    reported any (the others are counted apart: a study that does not record it, an external front-end),
    the mean active time and share of the time away, results on screen for at least `seen_ms` per query, the
    seconds each result reported on screen was visible, and how far down its page's list was seen."""
    rows: list[list] = []
    for system, members in system_groups(scores.system):
        reported = [i for i in members if attention.exposed[i] or attention.spans[i]]
        timed = [i for i in reported if attention.duration_ms[i] > 0]
        active = [attention.active_ms[i] / 1000 for i in timed]
        away = [1 - attention.active_ms[i] / attention.duration_ms[i] for i in timed]
        per_query = [attention.seen[i] / max(1, int(scores.n_queries[i])) for i in reported]
        visible = [
            attention.visible_ms[i] / 1000 / attention.exposed[i] for i in reported if attention.exposed[i]
        ]
        scroll = [
            attention.scroll_permille[i] / 10
            for i in reported
            if attention.scroll_permille[i] == attention.scroll_permille[i]
        ]

        def mean(values):
            return float(np.mean(values)) if values else float("nan")

        rows.append(
            [
                system,
                len(members),
                len(reported),
                mean(active),
                mean(away),
                mean(per_query),
                mean(visible),
                mean(scroll),
            ]
        )
    header = [
        "system",
        "sessions",
        "sessions_reporting",
        "active_s",
        "share_away",
        "results_seen_per_query",
        "seconds_on_screen_per_result",
        "page_scrolled_percent",
    ]

    def cell(value, fmt):
        return "—" if value != value else number_text(value, fmt)

    shown = [
        [
            system_label(r[0], names),
            r[1],
            r[2],
            cell(r[3], ".1f"),
            cell(r[4] * 100, ".1f") + (" %" if r[4] == r[4] else ""),
            cell(r[5], ".2f"),
            cell(r[6], ".2f"),
            cell(r[7], ".0f") + (" %" if r[7] == r[7] else ""),
        ]
        for r in rows
    ]
    figure = _table_figure(
        f"Attention and exposure per system (a result counts as seen after {seen_ms} ms on screen)",
        [
            "System",
            "Sessions",
            "Reporting",
            "Active (s)",
            "Away",
            "Seen per query",
            "Seconds on screen",
            "Scrolled",
        ],
        shown,
        weights=[2, 1, 1, 1, 1, 1.2, 1.4, 1],
    )
    return Chart(figure, header, rows)
