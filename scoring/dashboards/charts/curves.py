"""Session curves: the mean sDCG curve by system (Figure 2), by scenario (Figure 3), and the sDCG of each
query by rank (Figure 1)."""

from __future__ import annotations

import numpy as np

from .common import (
    CI_DIGITS,
    UNIT_WORDS,
    Chart,
    empty_chart,
    group_title,
    mean_band,
    normalized_curves,
    padded,
    palette_colour,
    query_axis,
    rgba_of,
    rounded,
    system_groups,
    unit_keys,
    unit_means,
)

FLAT_SHARE = (
    0.995  # Figure 1 is drawn to the rank where every curve has reached this share of its rank-100 value
)


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
    title = (
        f"Normalized sDCG, concatenated top-{top}, mean per system over {UNIT_WORDS[unit]} "
        f"({level:.0%} CI band)"
    )
    if not len(scores):
        return empty_chart(title)
    matrix = padded(normalized_curves(scores.curves, scores.ideals))
    width = matrix.shape[1]
    x = list(range(1, width + 1))
    data, rows = [], []
    keys = unit_keys(scores, unit)
    for index, (system, members) in enumerate(system_groups(scores.system)):
        units = unit_means(matrix, members, keys)
        mean, low, high = mean_band(units, level)
        members = units  # n below counts the units averaged
        colour = palette_colour(index)
        data += [
            {
                "type": "scatter",
                "x": x,
                "y": rounded(high),
                "mode": "lines",
                "line": {"width": 0},
                "hoverinfo": "skip",
                "showlegend": False,
                "legendgroup": system,
            },
            {
                "type": "scatter",
                "x": x,
                "y": rounded(low),
                "mode": "lines",
                "line": {"width": 0},
                "fill": "tonexty",
                "fillcolor": rgba_of(colour, 0.18),
                "hoverinfo": "skip",
                "showlegend": False,
                "legendgroup": system,
            },
            {
                "type": "scatter",
                "x": x,
                "y": rounded(mean),
                "customdata": [[lo, hi] for lo, hi in zip(rounded(low), rounded(high), strict=True)],
                # The hover rounds the mean and its band (CI_DIGITS); the JSON and the CSV keep them.
                "hovertemplate": f"{system}: %{{y:.{CI_DIGITS}f}} ({level:.0%} CI "
                f"%{{customdata[0]:.{CI_DIGITS}f}} to %{{customdata[1]:.{CI_DIGITS}f}})<extra></extra>",
                "mode": "lines",
                "name": f"{system} (n={len(members)})",
                "line": {"color": colour, "width": 2},
                "legendgroup": system,
                "legendgrouptitle": group_title(system, names),
            },
        ]
        rows += [
            [system, i + 1, float(mean[i]), float(low[i]), float(high[i]), len(members)] for i in range(width)
        ]
    layout = {
        "title": {"text": title},
        "xaxis": query_axis(width, top, fixed),
        "yaxis": {"title": {"text": "normalized sDCG"}, "rangemode": "tozero"},
        "hovermode": "x unified",
    }
    return Chart(
        {"data": data, "layout": layout},
        ["system", "position", "mean", "ci_low", "ci_high", UNIT_WORDS[unit]],
        rows,
    )


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
        return empty_chart(title)
    matrix = padded(scores.curves)
    width = matrix.shape[1]
    x = list(range(1, width + 1))
    data, rows, notes = [], [], []
    keys = unit_keys(scores, unit)
    for index, (system, members) in enumerate(system_groups(scores.system)):
        colour = palette_colour(index)
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
                    "y": rounded(mean),
                    "mode": "lines",
                    "name": f"{system}, {name} (n={len(units)})",
                    "line": {"color": colour, "dash": dash},
                    "legendgroup": system,
                    "legendgrouptitle": group_title(system, names),
                }
            )
            rows += [[scenario, system, name, i + 1, float(mean[i]), len(units)] for i in range(width)]
    layout = {
        "title": {"text": title},
        "xaxis": query_axis(width, top, fixed),
        "yaxis": {"title": {"text": "sDCG (not normalized)"}, "rangemode": "tozero"},
        "hovermode": "x unified",
    }
    return Chart(
        {"data": data, "layout": layout},
        ["scenario", "system", "sessions", "position", "mean", "n"],
        rows,
        notes,
    )


def flat_after(means: list[np.ndarray], share: float = FLAT_SHARE, least: int = 10) -> int:
    """The rank from which Figure 1's curves are flat: each (cumulative, so never falling) mean curve has
    reached `share` of its last value there. Two ranks beyond it, at least `least`, rounded up to a multiple
    of 5, at most the depth: the range the figure opens on."""
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
        return empty_chart(title)
    depth = vectors.by_rank.shape[1]
    x = list(range(1, depth + 1))
    data, rows, means = [], [], []
    systems = np.asarray(vectors.system)
    keys = {"participant": vectors.participant, "scenario": vectors.scenario}.get(unit)
    keys = list(keys) if keys is not None else [int(s) for s in vectors.session_id]
    for index, system in enumerate(dict.fromkeys(vectors.system)):
        colour = palette_colour(index)
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
                    "y": rounded(mean),
                    "mode": "lines",
                    "name": f"{system} {name} (n={len(units)})",
                    "line": {"color": colour, "dash": dash},
                    "legendgroup": system,
                    "legendgrouptitle": group_title(system, names),
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
