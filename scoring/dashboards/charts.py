"""Figure builders for the dashboards: stored results (scoring.selectors' arrays) in, Plotly figure dicts out.

Each builder returns a Chart: the figure (plain dicts, JSON-ready: plotted by static/js/charts.js), the rows
behind it for the CSV download, and notes in plain words. No Django here, so the numbers can be tested
against scoring/lib/session.py directly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..lib.meta_evaluation import ALL_SYSTEMS, COEFFICIENT_LABELS
from ..lib.session import SUMMARIES
from ..lib.statistics import block_means, compare_systems, p_text, verdict

SUMMARY_LABELS = {
    "final": "final concatenated gain",
    "normalized_final": "normalized final gain",
    "last_query": "last query's sDCG",
    "best_query": "best query's sDCG",
    "average": "average gain (avg-pos)",
}
END_LABELS = {
    "satisfied": "satisfied",
    "gave_up": "gave up",
    "timed_out": "timed out",
    "withdrawn": "withdrawn",
    "": "in progress",
}
END_SYMBOLS = {
    "satisfied": "star",
    "gave_up": "x",
    "timed_out": "square",
    "withdrawn": "diamond",
    "": "circle",
}
PALETTE = ["#2457c5", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#1098ad", "#e67700", "#495057"]
# Figure 4's sessions: 20 colours told apart on a white background (the systems' 8, then 12 lighter or darker
# ones), and past 20 a dash pattern as well, so 80 sessions have 80 distinct styles.
SESSION_PALETTE = [
    *PALETTE,
    "#74c0fc",
    "#ff8787",
    "#94d82d",
    "#b197fc",
    "#e599f7",
    "#3bc9db",
    "#fcc419",
    "#a9a9a9",
    "#1c3d8f",
    "#8f1d14",
    "#5c3a00",
    "#0c5c4a",
]
SESSION_DASHES = ["solid", "dash", "dot", "dashdot"]
MAX_LINES = 300  # individual sessions drawn in Figure 4; the CSV has them all
FLAT_SHARE = (
    0.995  # Figure 1 is drawn to the rank where every curve has reached this share of its rank-100 value
)


@dataclass
class Chart:
    figure: dict
    header: list[str]
    rows: list[list]
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"figure": self.figure, "notes": self.notes}


UNIT_WORDS = {"session": "sessions", "participant": "participants", "scenario": "scenarios"}


def annotate(chart: Chart, *, averaged_over: str, left_out) -> Chart:
    """Say on the chart what it averages over and how many sessions on unjudged scenarios it left out: in its
    notes, under its title (so a PNG export says it too), and in two columns of every CSV row."""
    left_text = left_out.text()
    chart.notes = [f"Averaged over: {averaged_over}.", left_text, left_out.excluded_text(), *chart.notes]
    layout = chart.figure.setdefault("layout", {})
    title = layout.setdefault("title", {})
    title["text"] = (
        f"{title.get('text', '')}<br><sub>averaged over {averaged_over}; "
        f"{left_out.sessions} unjudged session{'s' if left_out.sessions != 1 else ''} left out"
        f"{_excluded_title(left_out)}</sub>"
    )
    chart.header = [*chart.header, "averaged_over", "unjudged_sessions_left_out"]
    chart.rows = [[*row, averaged_over, left_out.sessions] for row in chart.rows]
    if left_out.exclusion_on or left_out.excluded_participants:
        # The agreement rule (docs/dashboards.md, "Excluded participants"): one more column while it is on.
        excluded_out = 0 if left_out.excluded_included else left_out.excluded_sessions
        chart.header = [*chart.header, "excluded_sessions_left_out"]
        chart.rows = [[*row, excluded_out] for row in chart.rows]
    return chart


def _excluded_title(left_out) -> str:
    if not (left_out.exclusion_on or left_out.excluded_participants):
        return ""
    who = len(left_out.excluded_participants)
    how = "counted" if left_out.excluded_included else "left out"
    return f"; {who} excluded participant{'s' if who != 1 else ''} {how}"


def unit_keys(scores, unit: str) -> list:
    """The unit each session belongs to: itself, its participant or its scenario."""
    if unit == "participant":
        return list(scores.participant)
    if unit == "scenario":
        return list(scores.scenario)
    return [int(s) for s in scores.session_id]


def unit_means(matrix: np.ndarray, members: np.ndarray, keys: list) -> np.ndarray:
    """The rows of `members` averaged per unit key, in order of first appearance: one row per unit. Array
    work, not a loop per unit: Figure 1 averages the earlier queries of thousands of sessions."""
    members = np.asarray(members, dtype=np.int64)
    codes: dict = {}
    inverse = np.fromiter(
        (codes.setdefault(keys[i], len(codes)) for i in members), dtype=np.int64, count=len(members)
    )
    if len(codes) == len(members):
        return matrix[members]
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(len(codes)))
    sums = np.add.reduceat(matrix[members[order]], starts, axis=0)
    return sums / np.bincount(inverse, minlength=len(codes))[:, None]


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def session_style(index: int) -> tuple[str, str]:
    """Figure 4's (colour, dash) of the index-th session: distinct for the first 80."""
    colours = len(SESSION_PALETTE)
    return SESSION_PALETTE[index % colours], SESSION_DASHES[(index // colours) % len(SESSION_DASHES)]


def system_label(code: str, names: dict[str, str] | None) -> str:
    """A system as the legends title it: its name, with its code (the filters' word for it) before it."""
    name = (names or {}).get(code, "")
    return f"{code}: {name}" if name and name != code else code


def _group_title(code: str, names: dict[str, str] | None) -> dict:
    return {"text": system_label(code, names)}


def _round(values) -> list:
    return [round(float(v), 6) for v in values]


def padded(curves: list[np.ndarray], width: int | None = None) -> np.ndarray:
    """(S, W) matrix of curves held constant after each one's end (W: the longest, or `width`)."""
    width = width or max((len(c) for c in curves), default=0)
    matrix = np.zeros((len(curves), width))
    for row, curve in zip(matrix, curves, strict=True):
        n = min(len(curve), width)
        row[:n] = curve[:n]
        if n:
            row[n:] = curve[n - 1]
    return matrix


def normalized_curves(curves: list[np.ndarray], ideals: list[np.ndarray]) -> list[np.ndarray]:
    out = []
    for curve, ideal in zip(curves, ideals, strict=True):
        values = np.zeros_like(curve)
        np.divide(curve, ideal, out=values, where=ideal != 0)
        out.append(values)
    return out


def mean_band(matrix: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column means with the t-based confidence interval of the mean (the band is the mean where n < 2)."""
    n = matrix.shape[0]
    mean = matrix.mean(axis=0)
    if n < 2:
        return mean, mean, mean
    half = stats.t.ppf(0.5 + level / 2, n - 1) * matrix.std(axis=0, ddof=1) / np.sqrt(n)
    return mean, mean - half, mean + half


def _query_axis(width: int, top: int, fixed: bool) -> dict:
    """Under pad + fixed each query is X ranks: label the segments Q1, Q2, ... as the paper does."""
    if not fixed or width == 0:
        return {"title": {"text": "position in the concatenated session"}}
    starts = list(range(1, width + 1, top))
    return {
        "title": {"text": f"concatenated top-{top} results of queries Q1..Q{len(starts)}"},
        "tickvals": starts,
        "ticktext": [f"Q{i}" for i in range(1, len(starts) + 1)],
        "showgrid": True,
    }


def _empty(title: str, message: str = "No scored sessions match these filters.") -> Chart:
    return Chart(
        {
            "data": [],
            "layout": {
                "title": {"text": title},
                "annotations": [
                    {
                        "text": message,
                        "showarrow": False,
                        "xref": "paper",
                        "yref": "paper",
                        "x": 0.5,
                        "y": 0.5,
                    }
                ],
            },
        },
        [],
        [],
        [message],
    )


def _groups(labels: list[str]) -> list[tuple[str, np.ndarray]]:
    arr = np.asarray(labels)
    return [(label, np.flatnonzero(arr == label)) for label in dict.fromkeys(labels)]


# --- Figure 2 ---------------------------------------------------------------------------------------------------


def curves_chart(
    scores,
    *,
    top: int,
    fixed: bool,
    level: float = 0.95,
    unit: str = "session",
    names: dict[str, str] | None = None,
) -> Chart:
    """Figure 2: per system, the mean normalized session curve over the concatenated top-X results from Q1 to
    the longest session, each short session held constant after its end, with a confidence band. With a unit
    other than the session, each participant's (scenario's) curves on a system are averaged first."""
    title = f"Normalized sDCG, concatenated top-{top}, mean per system over {UNIT_WORDS[unit]} ({level:.0%} CI band)"
    if not len(scores):
        return _empty(title)
    matrix = padded(normalized_curves(scores.curves, scores.ideals))
    width = matrix.shape[1]
    x = list(range(1, width + 1))
    data, rows = [], []
    keys = unit_keys(scores, unit)
    for index, (system, members) in enumerate(_groups(scores.system)):
        units = unit_means(matrix, members, keys)
        mean, low, high = mean_band(units, level)
        members = units  # n below counts the units averaged
        colour = _colour(index)
        data += [
            {
                "type": "scatter",
                "x": x,
                "y": _round(high),
                "mode": "lines",
                "line": {"width": 0},
                "hoverinfo": "skip",
                "showlegend": False,
                "legendgroup": system,
            },
            {
                "type": "scatter",
                "x": x,
                "y": _round(low),
                "mode": "lines",
                "line": {"width": 0},
                "fill": "tonexty",
                "fillcolor": _rgba(colour, 0.18),
                "hoverinfo": "skip",
                "showlegend": False,
                "legendgroup": system,
            },
            {
                "type": "scatter",
                "x": x,
                "y": _round(mean),
                "mode": "lines",
                "name": f"{system} (n={len(members)})",
                "line": {"color": colour, "width": 2},
                "legendgroup": system,
                "legendgrouptitle": _group_title(system, names),
            },
        ]
        rows += [
            [system, i + 1, float(mean[i]), float(low[i]), float(high[i]), len(members)] for i in range(width)
        ]
    layout = {
        "title": {"text": title},
        "xaxis": _query_axis(width, top, fixed),
        "yaxis": {"title": {"text": "normalized sDCG"}, "rangemode": "tozero"},
        "hovermode": "x unified",
    }
    return Chart(
        {"data": data, "layout": layout},
        ["system", "position", "mean", "ci_low", "ci_high", UNIT_WORDS[unit]],
        rows,
    )


# --- Figure 3 ---------------------------------------------------------------------------------------------------


def scenario_chart(
    scores,
    *,
    scenario: str,
    top: int,
    fixed: bool,
    k: int,
    unit: str = "session",
    names: dict[str, str] | None = None,
) -> Chart:
    """Figure 3: one scenario's mean unnormalized curves per system, over all its sessions and over those
    of at least k queries (dashed); per participant first if that is the unit."""
    title = (
        f"Scenario {scenario}: sDCG, concatenated top-{top}, mean per system over {UNIT_WORDS[unit]} "
        f"(dashed: sessions of >= {k} queries)"
    )
    if not len(scores):
        return _empty(title)
    matrix = padded(scores.curves)
    width = matrix.shape[1]
    x = list(range(1, width + 1))
    data, rows, notes = [], [], []
    keys = unit_keys(scores, unit)
    for index, (system, members) in enumerate(_groups(scores.system)):
        colour = _colour(index)
        long_members = members[scores.n_queries[members] >= k]
        for subset, name, dash in ((members, "all", "solid"), (long_members, f">= {k} queries", "dash")):
            if not len(subset):
                notes.append(f"{system} has no session of at least {k} queries in scenario {scenario}.")
                continue
            units = unit_means(matrix, subset, keys)
            mean = units.mean(axis=0)
            data.append(
                {
                    "type": "scatter",
                    "x": x,
                    "y": _round(mean),
                    "mode": "lines",
                    "name": f"{system}, {name} (n={len(units)})",
                    "line": {"color": colour, "dash": dash},
                    "legendgroup": system,
                    "legendgrouptitle": _group_title(system, names),
                }
            )
            rows += [[scenario, system, name, i + 1, float(mean[i]), len(units)] for i in range(width)]
    layout = {
        "title": {"text": title},
        "xaxis": _query_axis(width, top, fixed),
        "yaxis": {"title": {"text": "sDCG (not normalized)"}, "rangemode": "tozero"},
        "hovermode": "x unified",
    }
    return Chart(
        {"data": data, "layout": layout},
        ["scenario", "system", "sessions", "position", "mean", "n"],
        rows,
        notes,
    )


# --- Figure 4 ---------------------------------------------------------------------------------------------------


LABEL_STEP_PX = 14  # Figure 4: the vertical distance between stacked stop labels


def stop_label_offsets(stops: list[tuple[float, float]], *, width: int, ymax: float) -> list[tuple[int, int]]:
    """Pixel offsets (ax, ay) of Figure 4's stop labels from their markers, so that labels of stops that fall
    together (near zero, typically) never sit on one another: the k-th stop near earlier ones gets its label on
    the left for even k and on the right for odd k, one step higher each second stop. Stops are "near" within
    4% of the positions and 6% of the highest value (a label is about that size on the default figure)."""
    near_x, near_y = max(1.0, 0.04 * width), 0.06 * (ymax or 1.0)
    placed: list[tuple[float, float]] = []
    offsets = []
    for x, y in stops:
        k = sum(1 for px, py in placed if abs(px - x) <= near_x and abs(py - y) <= near_y)
        placed.append((x, y))
        offsets.append((-18 if k % 2 == 0 else 18, -(14 + LABEL_STEP_PX * (k // 2))))
    return offsets


def sessions_chart(
    scores, *, scenario: str, system: str, top: int, fixed: bool, names: dict[str, str] | None = None
) -> Chart:
    """Figure 4: every session of one scenario on one system, padded to the same length, each labelled with its
    participant and marked where it stopped and why. Each session has its own colour (and past 20 a dash
    pattern too); the labels of stops that fall together are fanned out rather than printed on one another."""
    title = f"Individual sessions: scenario {scenario} on {system_label(system, names)}, sDCG over concatenated top-{top}"
    if not len(scores):
        return _empty(title)
    matrix = padded(scores.curves)
    width = matrix.shape[1]
    x = list(range(1, width + 1))
    data, rows, notes, stops = [], [], [], []
    shown = min(len(scores), MAX_LINES)
    if shown < len(scores):
        notes.append(f"Drawing {shown} of {len(scores)} sessions; filter by participant or download the CSV.")
    for s in range(len(scores)):
        reason = END_LABELS.get(scores.end_reason[s], scores.end_reason[s])
        label = f"{scores.participant[s]}: {reason} after Q{scores.n_queries[s]}"
        end = int(scores.length[s])
        rows.append(
            [
                scores.participant[s],
                scenario,
                system,
                scores.end_reason[s],
                int(scores.n_queries[s]),
                end,
                *[float(v) for v in matrix[s]],
            ]
        )
        if s >= shown:
            continue
        colour, dash = session_style(s)
        stop_y = round(float(matrix[s, end - 1]), 6) if end else 0.0
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": _round(matrix[s]),
                "mode": "lines",
                "name": label,
                "line": {"color": colour, "width": 1.5, "dash": dash},
                "legendgroup": str(s),
            }
        )
        data.append(
            {
                "type": "scatter",
                "x": [end],
                "y": [stop_y],
                "mode": "markers",
                "marker": {
                    "symbol": END_SYMBOLS.get(scores.end_reason[s], "circle"),
                    "size": 10,
                    "color": colour,
                },
                "name": f"{label} (stop)",
                "showlegend": False,
                "legendgroup": str(s),
                "hovertext": [f"{label}: stopped here"],
                "hoverinfo": "text",
            }
        )
        stops.append((end, stop_y, str(scores.participant[s]), colour))
    ymax = float(matrix[:shown].max()) if shown else 0.0
    # Lowest stops first: they are the crowded ones (sessions that found little), and their labels go upwards.
    order = sorted(range(len(stops)), key=lambda i: (stops[i][1], stops[i][0]))
    offsets = stop_label_offsets([stops[i][:2] for i in order], width=width, ymax=ymax)
    annotations = []
    for i, (ax, ay) in zip(order, offsets, strict=True):
        end, stop_y, participant, colour = stops[i]
        annotations.append(
            {
                "x": end,
                "y": stop_y,
                "xref": "x",
                "yref": "y",
                "text": participant,
                "showarrow": True,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": colour,
                "ax": ax,
                "ay": ay,
                "xanchor": "right" if ax < 0 else "left",
                "font": {"size": 10, "color": colour},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
    rise = max((-ay for _ax, ay in offsets), default=0)
    counts = Counter(END_LABELS.get(r, r) for r in scores.end_reason)
    notes.append(
        "Stopping points (markers): "
        + ", ".join(f"{n} {reason}" for reason, n in counts.most_common())
        + ". Star: satisfied; x: gave up; square: timed out."
    )
    layout = {
        "title": {"text": title},
        "xaxis": _query_axis(width, top, fixed),
        "yaxis": {"title": {"text": "sDCG (not normalized)"}, "rangemode": "tozero"},
        "legend": {"font": {"size": 10}},
        "annotations": annotations,
        # Room above the plot for the highest fanned-out label, and a taller figure when they are many.
        "margin": {"t": 90 + max(0, rise - 40)},
        "height": 480 + max(0, rise - 40),
    }
    header = [
        "participant",
        "scenario",
        "system",
        "end_reason",
        "queries",
        "end_position",
        *[f"p{i}" for i in x],
    ]
    return Chart({"data": data, "layout": layout}, header, rows, notes)


# --- Figure 1 ---------------------------------------------------------------------------------------------------


def flat_after(means: list[np.ndarray], share: float = FLAT_SHARE, least: int = 10) -> int:
    """The rank from which Figure 1's curves are flat: each (cumulative, so never falling) mean curve has reached
    `share` of its last value there. Two ranks beyond it, at least `least`, rounded up to a multiple of 5, at
    most the depth: the range the figure opens on."""
    depth = max((len(m) for m in means), default=0)
    if not depth:
        return 0
    reached = 1
    for mean in means:
        last = float(mean[-1]) if len(mean) else 0.0
        if last <= 0:
            continue
        reached = max(reached, int(np.argmax(mean >= share * last)) + 1)
    return min(depth, max(least, -(-(reached + 2) // 5) * 5))


def queries_chart(vectors, *, unit: str = "session", names: dict[str, str] | None = None) -> Chart:
    """Figure 1: per system, the mean sDCG by rank (to top 100) of the sessions' last queries against their
    earlier queries; and of each session's best query (the highest sDCG at X; dotted). The queries of a unit
    (a session's earlier queries, or a participant's) are averaged first, then the units."""
    title = (
        f"sDCG by rank of the last query (LQ) against earlier queries (Non-last Q), and the best query, "
        f"mean over {UNIT_WORDS[unit]}"
    )
    if not len(vectors.system):
        return _empty(title)
    depth = vectors.by_rank.shape[1]
    x = list(range(1, depth + 1))
    data, rows, means = [], [], []
    systems = np.asarray(vectors.system)
    keys = {"participant": vectors.participant, "scenario": vectors.scenario}.get(unit)
    keys = list(keys) if keys is not None else [int(s) for s in vectors.session_id]
    for index, system in enumerate(dict.fromkeys(vectors.system)):
        colour = _colour(index)
        mine = systems == system
        idx = np.flatnonzero(mine)
        # The best query of each session: the first of its highest sDCG at X.
        order = np.lexsort((-vectors.sdcg[idx], vectors.session_id[idx]))
        sessions_sorted = vectors.session_id[idx][order]
        firsts = np.concatenate(([True], sessions_sorted[1:] != sessions_sorted[:-1]))
        best = idx[order][firsts]
        for name, members, dash in (
            ("LQ", idx[vectors.is_last[idx]], "solid"),
            ("Non-last Q", idx[~vectors.is_last[idx]], "dash"),
            ("best Q", best, "dot"),
        ):
            if not len(members):
                continue
            units = unit_means(vectors.by_rank.astype(np.float64), members, keys)
            mean = units.mean(axis=0)
            means.append(mean)
            data.append(
                {
                    "type": "scatter",
                    "x": x,
                    "y": _round(mean),
                    "mode": "lines",
                    "name": f"{system} {name} (n={len(units)})",
                    "line": {"color": colour, "dash": dash},
                    "legendgroup": system,
                    "legendgrouptitle": _group_title(system, names),
                }
            )
            rows += [[system, name, i + 1, float(mean[i]), len(units)] for i in range(depth)]
    # The range the data calls for, not the depth: the curves are cumulative and flat once the judged
    # documents are used up (about rank 12 in the paper's study); Plotly's autoscale button shows all of it.
    shown = flat_after(means)
    notes = []
    if shown < depth:
        notes.append(
            f"Ranks 1-{shown} shown: every curve is within {1 - FLAT_SHARE:.1%} of its rank-{depth} value "
            f"by rank {shown}. Plotly's autoscale button and the CSV give all {depth} ranks."
        )
    layout = {
        "title": {"text": title},
        "xaxis": {"title": {"text": "rank"}, "range": [0.5, shown + 0.5]},
        "yaxis": {"title": {"text": "average sDCG"}, "rangemode": "tozero"},
        "hovermode": "x unified",
    }
    return Chart(
        {"data": data, "layout": layout}, ["system", "queries", "rank", "mean_sdcg", "n"], rows, notes
    )


# --- Tables 1 and 2 -----------------------------------------------------------------------------------------------


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
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in header]
    table = {
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


def participants_table(answers: list[dict], items: list[dict]) -> Chart:
    """Table 1: each numeric questionnaire item's mean and standard deviation over the participants."""
    header = ["feature", "mean", "sd", "n"]
    rows = []
    for item in items:
        if item.get("kind") not in ("integer", "scale", "number", "float"):
            continue
        values = np.asarray(
            [
                a[item["name"]]
                for a in answers
                if isinstance(a.get(item["name"]), int | float) and not isinstance(a.get(item["name"]), bool)
            ],
            dtype=np.float64,
        )
        sd = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
        mean = float(values.mean()) if len(values) else float("nan")
        rows.append([item.get("label", item["name"]), mean, sd, len(values)])
    shown = [[r[0], f"{r[1]:.1f}", f"± {r[2]:.1f}", r[3]] for r in rows]
    figure = _table_figure(
        f"Participant features (N = {len(answers)})",
        ["Feature", "Average", "Standard deviation", "N"],
        shown,
        weights=[4, 1, 1.4, 0.6],
    )
    return Chart(figure, header, rows)


def query_counts_table(scores, *, unit: str = "session", names: dict[str, str] | None = None) -> Chart:
    """Table 2: sessions by their number of queries, per system, and the mean number of queries per session
    (per participant's or scenario's sessions first, if that is the unit)."""
    top = int(scores.n_queries.max()) if len(scores) else 0
    rows = []
    keys = unit_keys(scores, unit)
    queries = scores.n_queries.astype(np.float64)[:, None]
    for system, members in _groups(scores.system):
        counts = np.bincount(scores.n_queries[members], minlength=top + 1)[1:]
        mean = float(unit_means(queries, members, keys).mean())
        rows.append([system, len(members), *[int(c) for c in counts], mean])
    header = ["system", "sessions", *[str(n) for n in range(1, top + 1)], "mean_per_session"]
    shown = [[system_label(r[0], names), *r[1:-1], f"{r[-1]:.2f}"] for r in rows]
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


# --- statistics -------------------------------------------------------------------------------------------------


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if not np.isfinite(v) else f"{v:.4g}"
    return str(v)


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
            f"scores {abs(e.estimate):.4g} {direction} than {e.first} (95% CI {e.low:.4g} to {e.high:.4g}); "
            f"the system effect {verdict(e.p_value)} ({p_text(e.p_value)})."
        )
        rows.append(
            [
                name,
                f"{e.first} vs {e.second}",
                e.estimate,
                f"[{e.low:.6g}, {e.high:.6g}]",
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
        variances = ", ".join(f"{k} {v:.4g}" for k, v in mixed.variances.items())
        notes.append(
            f"Mixed model {mixed.formula} (REML, statsmodels MixedLM, crossed variance components); "
            f"variances: {variances}."
        )
    return rows, notes


def statistics_chart(scores, *, summary: str, unit: str = "session", mixed=None) -> Chart:
    """The summary per system (box plots) and every test of scoring.lib.statistics, read in words, all on one unit:
    sessions (unpaired tests), or participants' or scenarios' means (paired tests, blocks with every system);
    with adjusted p-values, effect sizes with intervals, and the mixed model on the sessions themselves."""
    if summary not in SUMMARIES:
        raise ValueError(f"unknown summary {summary!r}")
    label = SUMMARY_LABELS[summary]
    per = "session" if unit == "session" else f"{unit} (mean of its sessions)"
    title = f"{label.capitalize()} per {per}, by system"
    if not len(scores):
        return _empty(title)
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
    if paired:
        system_labels, _, matrix = block_means(values, scores.system, blocks)
        boxes = [(system, matrix[:, system_labels.index(system)]) for system, _ in _groups(scores.system)]
    else:
        boxes = [(system, values[members]) for system, members in _groups(scores.system)]
    data = [
        {
            "type": "box",
            "y": _round(points),
            "name": system,
            "boxmean": "sd",
            "boxpoints": "all",
            "jitter": 0.4,
            "pointpos": 0,
            "marker": {"color": _colour(i), "size": 4},
            "xaxis": "x",
            "yaxis": "y",
        }
        for i, (system, points) in enumerate(boxes)
    ]
    header = [
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
            f"[{d.low:.6g}, {d.high:.6g}]",
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

    def effect_text(row):
        if not row[9] or row[10] is None or not np.isfinite(row[10]):
            return "" if not row[9] else f"{row[9]}: not defined"
        interval = "" if row[11] is None or not np.isfinite(row[11]) else f" [{row[11]:.3g}, {row[12]:.3g}]"
        return f"{row[9]} {row[10]:.3g}{interval}"

    table_rows = [
        [r[0], r[1], _fmt(r[2]), r[3], _fmt(r[4]), _fmt(r[7]), _fmt(r[8]), effect_text(r), r[5]] for r in rows
    ]
    columns = list(zip(*table_rows, strict=True)) if table_rows else [[]] * 9
    data.append(
        {
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
    )
    layout = {
        "title": {"text": title},
        "xaxis": {"domain": [0, 0.3]},
        "yaxis": {"title": {"text": label}},
        "showlegend": False,
        "height": 520 + 18 * len(rows),
    }
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
    return Chart({"data": data, "layout": layout}, header, rows, notes)


# --- meta-evaluation --------------------------------------------------------------------------------------------


def meta_evaluation_chart(
    result, *, rating: str, rating_label: str, coefficient: str, labels: dict[str, str], unit: str = "session"
) -> Chart:
    """Each measure against one post-task rating (the `rating` option), one coefficient at a time (the chart),
    with a bootstrap 95% interval, over all systems and per system; the table under it and the CSV give every
    rating, both coefficients and the adjusted p-values."""
    word = COEFFICIENT_LABELS[coefficient]
    title = f"{word} of each measure with the rating “{rating_label}”, per {unit} (95% bootstrap CI)"
    header = [
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
        chart = _empty(title, result.notes[0] if result.notes else "No measure and rating to correlate.")
        chart.header, chart.rows, chart.notes = header, rows, list(result.notes)
        return chart
    measures = list(dict.fromkeys(a.measure for a in shown))
    scopes = list(dict.fromkeys(a.scope for a in shown))
    data = []
    for index, scope in enumerate(scopes):
        mine = {a.measure: a for a in shown if a.scope == scope}
        values = [mine[m].value for m in measures]
        finite = [np.isfinite(v) for v in values]
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": scope,
                "orientation": "h",
                "x": [round(v, 6) if ok else None for v, ok in zip(values, finite, strict=True)],
                "y": measures,
                "xaxis": "x",
                "yaxis": "y",
                "marker": {
                    "color": _colour(index) if scope != ALL_SYSTEMS else "#000",
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
        )
    table = [
        [
            a.scope,
            a.measure,
            a.n,
            _fmt(a.value),
            "" if not np.isfinite(a.low) else f"[{a.low:.3f}, {a.high:.3f}]",
            _fmt(a.p_value),
            _fmt(a.p_holm),
            _fmt(a.p_bh),
        ]
        for a in shown
    ]
    data.append(
        {
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
    )
    layout = {
        "title": {"text": title},
        "xaxis": {"title": {"text": word}, "range": [-1.05, 1.05], "zeroline": True, "anchor": "y"},
        "yaxis": {"domain": [0.52, 1], "type": "category", "automargin": True, "autorange": "reversed"},
        "height": 520 + 22 * (len(shown) + len(measures)),
        "legend": {"orientation": "h", "y": 1.08},
    }
    notes = list(result.notes)
    overall = [a for a in shown if a.scope == ALL_SYSTEMS and np.isfinite(a.value)]
    if overall:
        best = max(overall, key=lambda a: a.value)
        notes.append(
            f"Over all systems, {labels.get(best.measure, best.measure)} agrees best with “{rating_label}” "
            f"({word} {best.value:.3f}, 95% CI {best.low:.3f} to {best.high:.3f}, {best.n} {unit}s; "
            f"{p_text(best.p_holm)} after Holm's correction over the {len(overall)} measures)."
        )
    notes.append(
        "p Holm and p BH: adjusted over every (measure, rating) pair of one scope and one coefficient. "
        "Intervals: percentile bootstrap of the sessions (2,000 seeded resamples)."
    )
    return Chart({"data": data, "layout": layout}, header, rows, notes)


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
            f"{s} ({v:.4g})" for s, v in sorted(means.items(), key=lambda kv: -kv[1]) if np.isfinite(v)
        )
        for name, means in result.system_means.items()
    ]
    notes += [n for n in result.notes if "system" in n]
    if not result.rankings:
        chart = _empty(title, "Needs two systems or more.")
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


# --- sensitivity ------------------------------------------------------------------------------------------------


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
        return _empty(title, f"Needs sessions of both {first} and {second}.")
    values = scores.grid[..., SUMMARIES.index(summary)].astype(np.float64)  # (S, nb, nbq)
    if unit == "session":
        diff = values[c].mean(axis=0) - values[a].mean(axis=0)
    else:
        keys = unit_keys(scores, unit)
        both = sorted({keys[i] for i in np.flatnonzero(a)} & {keys[i] for i in np.flatnonzero(c)}, key=str)
        if not both:
            return _empty(title, f"No {unit} has sessions on both {first} and {second}.")

        def per_unit(mask):
            by_key = {key: [] for key in both}
            for i in np.flatnonzero(mask):
                if keys[i] in by_key:
                    by_key[keys[i]].append(i)
            return np.stack([values[by_key[key]].mean(axis=0) for key in both])

        diff = (per_unit(c) - per_unit(a)).mean(axis=0)
    limit = float(np.abs(diff).max()) or 1.0
    data = [
        {
            "type": "heatmap",
            "x": [f"{v:g}" for v in grid_bq],
            "y": [f"{v:g}" for v in grid_b],
            "z": [_round(row) for row in diff],
            "colorscale": "RdBu",
            "zmid": 0,
            "zmin": -limit,
            "zmax": limit,
            "colorbar": {"title": {"text": "difference"}},
            "hovertemplate": "b %{y}, bq %{x}: %{z:.4g}<extra></extra>",
        }
    ]
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
    layout = {
        "title": {"text": title},
        "xaxis": {"title": {"text": "bq (query discount base)"}, "type": "category"},
        "yaxis": {"title": {"text": "b (rank discount base)"}, "type": "category"},
        "annotations": annotations,
    }
    rows = [
        [float(vb), float(vq), float(diff[i, j])]
        for i, vb in enumerate(grid_b)
        for j, vq in enumerate(grid_bq)
    ]
    positive = int((diff > 0).sum())
    notes = [
        f"{second} is ahead of {first} at {positive} of {diff.size} (b, bq) settings; the difference ranges "
        f"from {diff.min():.4g} to {diff.max():.4g}."
    ]
    return Chart({"data": data, "layout": layout}, ["b", "bq", f"mean_{summary}_difference"], rows, notes)
