"""Figure builders for the dashboards: stored results (scoring.selectors' arrays) in, Plotly figure dicts out.

Each builder returns a Chart: the figure (plain dicts, JSON-ready: plotted by static/js/charts.js), the rows
behind it for the CSV download, and notes in plain words. No Django here, so the numbers can be tested
against scoring/lib/session.py directly.

One module per figure family: common.py (the Chart, labels, colours, array helpers), curves.py (Figures 1-3),
sessions.py (Figure 4), tables.py (Tables 1 and 2), statistics.py (the comparison of systems), meta.py
(meta-evaluation), sensitivity.py (b and bq). Callers import from `scoring.dashboards.charts`.
"""

from .common import (
    END_LABELS,
    END_SYMBOLS,
    PALETTE,
    SESSION_DASHES,
    SESSION_PALETTE,
    SUMMARY_LABELS,
    UNIT_WORDS,
    Chart,
    annotate,
    mean_band,
    normalized_curves,
    padded,
    session_style,
    system_label,
    title_and_legend_apart,
    unit_keys,
    unit_means,
)
from .curves import FLAT_SHARE, curves_chart, flat_after, queries_chart, scenario_chart
from .meta import meta_evaluation_chart, meta_rankings_chart
from .sensitivity import sensitivity_chart
from .sessions import LABEL_STEP_PX, MAX_LINES, sessions_chart, stop_label_offsets
from .statistics import statistics_chart
from .tables import (
    TABLE_LINE_PX,
    TABLE_PAD_PX,
    TABLE_TITLE_PX,
    TABLE_WIDTH_PX,
    attention_table,
    participants_table,
    query_counts_table,
    table_height,
)

__all__ = [
    "attention_table",
    "Chart",
    "END_LABELS",
    "END_SYMBOLS",
    "FLAT_SHARE",
    "LABEL_STEP_PX",
    "MAX_LINES",
    "PALETTE",
    "SESSION_DASHES",
    "SESSION_PALETTE",
    "SUMMARY_LABELS",
    "TABLE_LINE_PX",
    "TABLE_PAD_PX",
    "TABLE_TITLE_PX",
    "TABLE_WIDTH_PX",
    "UNIT_WORDS",
    "annotate",
    "curves_chart",
    "flat_after",
    "mean_band",
    "meta_evaluation_chart",
    "meta_rankings_chart",
    "normalized_curves",
    "padded",
    "participants_table",
    "queries_chart",
    "query_counts_table",
    "scenario_chart",
    "sensitivity_chart",
    "session_style",
    "sessions_chart",
    "statistics_chart",
    "stop_label_offsets",
    "system_label",
    "table_height",
    "title_and_legend_apart",
    "unit_keys",
    "unit_means",
]
