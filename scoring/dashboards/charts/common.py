"""What every figure builder shares: the Chart it returns, labels and colours, the averaging note, units, and
the small array helpers (padding, normalising, mean bands)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ...lib.number_text import number_text
from ...lib.session import SUMMARY_LABELS  # noqa: F401  (the charts' name for it; its home is the library)

END_LABELS = {
    "satisfied": "satisfied",
    "gave_up": "gave up",
    "timed_out": "timed out",
    "withdrawn": "withdrawn",
    "left": "left (panel)",
    "": "in progress",
}


END_SYMBOLS = {
    "satisfied": "star",
    "gave_up": "x",
    "timed_out": "square",
    "withdrawn": "diamond",
    "left": "triangle-down",
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


@dataclass
class Chart:
    figure: dict
    header: list[str]
    rows: list[list]
    notes: list[str] = field(default_factory=list)
    # Set by annotate: {"key": ..., "line": ..., "notes": how many of the first notes state the population}.
    # The dashboard shows those notes once at the top and, on a card, only the line where its key differs.
    population: dict | None = None

    def as_json(self) -> dict:
        payload = {"figure": self.figure, "notes": self.notes}
        if self.population is not None:
            payload["population"] = self.population
        return payload


UNIT_WORDS = {"session": "sessions", "participant": "participants", "scenario": "scenarios"}


# Where every figure's legend goes: right of the plot area, its top at the plot area's top. The
# title stays in the top margin, which is kept tall enough for its lines, so the two never meet; nor does
# the legend meet an axis title (left of and under the plot area) or a table under the plot.
LEGEND_BESIDE = {"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"}


TITLE_LINE_PX = 22  # a title line at Plotly's 17 px title font (a <sub> line is smaller)


PLOTLY_MARGIN_T = 100  # Plotly's default top margin


def title_and_legend_apart(figure: dict) -> dict:
    """The one rule for a figure's title and legend (every dashboard chart passes here through annotate, the
    power curve through scoring.planning.charts): the top margin, where Plotly centres the title, is at
    least as tall as the title's lines and some room, so the title never reaches the plot area, and the
    legend, where one is shown, is drawn beside the plot area (LEGEND_BESIDE), whatever position a builder
    asked for. Returns the figure."""
    layout = figure.setdefault("layout", {})
    text = (layout.get("title") or {}).get("text") or ""
    if text:
        margin = layout.setdefault("margin", {})
        lines = text.count("<br>") + 1
        margin["t"] = max(margin.get("t", PLOTLY_MARGIN_T), TITLE_LINE_PX * lines + 36)
    if layout.get("showlegend") is not False:
        layout["legend"] = {**layout.get("legend", {}), **LEGEND_BESIDE}
    return figure


def annotate(chart: Chart, *, averaged_over: str, left_out) -> Chart:
    """Say on the chart whose sessions it counts (its population and n), what it averages over and how many
    sessions on unjudged scenarios it left out: in its notes, under its title (so a PNG export says it too),
    and in columns of every CSV row."""
    left_text = left_out.text()
    stated = [
        left_out.population_text(),
        f"Averaged over: {averaged_over}.",
        left_text,
        left_out.excluded_text(),
    ]
    chart.notes = [*stated, *chart.notes]
    chart.population = {
        "key": left_out.page_key(averaged_over),
        "line": left_out.card_line(averaged_over),
        "notes": len(stated),
    }
    layout = chart.figure.setdefault("layout", {})
    title = layout.setdefault("title", {})
    title["text"] = (
        f"{title.get('text', '')}<br><sub>{left_out.population_title()}; averaged over {averaged_over}; "
        f"{left_out.sessions} unjudged session{'s' if left_out.sessions != 1 else ''} left out"
        f"{_excluded_title(left_out)}</sub>"
    )
    title_and_legend_apart(chart.figure)
    # The population's columns first, so the older ones keep their places at the end of every row.
    population = left_out.population.code()
    counted = left_out.counted_sessions if left_out.applies else left_out.counted_participants
    chart.header = [
        *chart.header,
        "population",
        "population_n",
        "averaged_over",
        "unjudged_sessions_left_out",
    ]
    chart.rows = [[*row, population, counted, averaged_over, left_out.sessions] for row in chart.rows]
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


def rgba_of(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def palette_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def session_style(index: int) -> tuple[str, str]:
    """Figure 4's (colour, dash) of the index-th session: distinct for the first 80."""
    colours = len(SESSION_PALETTE)
    return SESSION_PALETTE[index % colours], SESSION_DASHES[(index // colours) % len(SESSION_DASHES)]


def system_label(code: str, names: dict[str, str] | None) -> str:
    """A system as the legends title it: its name, with its code (the filters' word for it) before it."""
    name = (names or {}).get(code, "")
    return f"{code}: {name}" if name and name != code else code


def group_title(code: str, names: dict[str, str] | None) -> dict:
    return {"text": system_label(code, names)}


def rounded(values) -> list:
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


def query_axis(width: int, top: int, fixed: bool) -> dict:
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


def empty_chart(title: str, message: str = "No scored sessions match these filters.") -> Chart:
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


def system_groups(labels: list[str]) -> list[tuple[str, np.ndarray]]:
    arr = np.asarray(labels)
    return [(label, np.flatnonzero(arr == label)) for label in dict.fromkeys(labels)]


# Where a page shows an interval (a chart's table, its hover), its bounds to this many significant digits;
# the CSV and the JSON keep them whole.
CI_DIGITS = 3


def interval_shown(low, high) -> str:
    """An interval as a page shows it, "[low, high]" rounded (CI_DIGITS); blank when either bound is not
    defined."""
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return ""
    spec = f".{CI_DIGITS}g"
    return f"[{number_text(low, spec)}, {number_text(high, spec)}]"


def interval_exported(low, high) -> str:
    """An interval as the CSV writes it: the bounds at full precision (a float's shortest exact text)."""
    return f"[{float(low)!r}, {float(high)!r}]"


def format_value(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if not np.isfinite(v) else number_text(v, ".4g")
    return str(v)
