"""Figure 4: each session's curve in one scenario and system, with where and why it stopped."""

from __future__ import annotations

from collections import Counter

from .common import (
    END_LABELS,
    END_SYMBOLS,
    Chart,
    empty_chart,
    padded,
    query_axis,
    rounded,
    session_style,
    system_label,
)

MAX_LINES = 300  # individual sessions drawn in Figure 4; the CSV has them all


LABEL_STEP_PX = 14  # Figure 4: the vertical distance between stacked stop labels


def stop_label_offsets(stops: list[tuple[float, float]], *, width: int, ymax: float) -> list[tuple[int, int]]:
    """Pixel offsets (ax, ay) of Figure 4's stop labels from their markers, so that labels of stops that fall
    together (near zero, typically) never sit on one another: the k-th stop near earlier ones gets its label
    on the left for even k and on the right for odd k, one step higher each second stop. Stops are "near"
    within 4% of the positions and 6% of the highest value (a label is about that size on the default
    figure)."""
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
    """Figure 4: every session of one scenario on one system, padded to the same length, each labelled with
    its participant and marked where it stopped and why. Each session has its own colour (and past 20 a dash
    pattern too); the labels of stops that fall together are fanned out rather than printed on one another."""
    title = (
        f"Individual sessions: scenario {scenario} on {system_label(system, names)}, "
        f"sDCG over concatenated top-{top}"
    )
    if not len(scores):
        return empty_chart(title)
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
        traces, stop = _session_traces(scores, s, label=label, x=x, curve=matrix[s], end=end)
        data += traces
        stops.append(stop)
    ymax = float(matrix[:shown].max()) if shown else 0.0
    annotations, rise = _stop_annotations(stops, width=width, ymax=ymax)
    counts = Counter(END_LABELS.get(r, r) for r in scores.end_reason)
    notes.append(
        "Stopping points (markers): "
        + ", ".join(f"{n} {reason}" for reason, n in counts.most_common())
        + ". Star: satisfied; x: gave up; square: timed out."
    )
    layout = {
        "title": {"text": title},
        "xaxis": query_axis(width, top, fixed),
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


def _session_traces(scores, s: int, *, label: str, x: list[int], curve, end: int) -> tuple[list[dict], tuple]:
    """Session s's line and its stop marker, and the stop (position, value, participant, colour)."""
    colour, dash = session_style(s)
    stop_y = round(float(curve[end - 1]), 6) if end else 0.0
    line = {
        "type": "scatter",
        "x": x,
        "y": rounded(curve),
        "mode": "lines",
        "name": label,
        "line": {"color": colour, "width": 1.5, "dash": dash},
        "legendgroup": str(s),
        # The session's id on every point: a click opens its replay (static/js/charts.js).
        "customdata": [int(scores.session_id[s])] * len(x),
    }
    marker = {
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
        "hovertext": [f"{label}: stopped here (click to replay)"],
        "hoverinfo": "text",
        "customdata": [int(scores.session_id[s])],
    }
    return [line, marker], (end, stop_y, str(scores.participant[s]), colour)


def _stop_annotations(stops: list[tuple], *, width: int, ymax: float) -> tuple[list[dict], int]:
    """The participants' labels at the stops, fanned out (stop_label_offsets), and how far the highest one
    rises above its marker, in pixels."""
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
    return annotations, rise
