"""A figure that rounds to zero prints as 0.000, never "-0.000" (nor "-0"), wherever the dashboards and
their tables format numbers: the meta-evaluation page's cells, Table 1's cells, the statistics table and its
readings, the effect sizes and the reference-change tau."""

import numpy as np

from scoring.dashboards import views
from scoring.dashboards.charts import common, participants_table
from scoring.lib.conclusion_change import Tau
from scoring.lib.number_text import number_text
from scoring.lib.statistics.comparison import p_text
from scoring.lib.statistics.effects import Effect


def test_number_text_drops_the_sign_of_a_rounded_zero_only():
    assert number_text(-0.0001, ".3f") == "0.000"
    assert number_text(-0.0, ".4g") == "0"
    assert number_text(-0.04, ".1f") == "0.0"
    assert number_text(-0.0006, ".3f") == "-0.001"  # a figure that is not zero keeps its sign
    assert number_text(-1e-9, ".4g") == "-1e-09"
    assert number_text(0.25, ".1%") == "25.0%"


def test_the_meta_evaluation_page_and_the_chart_tables_print_no_minus_zero():
    assert views._number(-0.0001, 3) == "0.000"
    assert views._number(-0.0, 4) == "0"
    assert common.format_value(-0.0) == "0"
    assert common.interval_shown(-0.0, 0.5) == "[0, 0.5]"


def test_table_1_prints_a_mean_near_zero_as_0_0():
    items = [{"name": "change", "label": "Change", "kind": "number"}]
    table = participants_table([{"change": -0.02}, {"change": 0.0}], items)
    cells = table.figure["data"][0]["cells"]["values"]
    assert cells[1][0].startswith("0.0 ± 0.0 (n = 2)"), cells


def test_effect_sizes_p_values_and_tau_print_no_minus_zero():
    effect = Effect("Cohen's d_z", -0.0, -0.5, -0.0, 0.95, "exact")  # a difference of exactly zero
    assert effect.text() == "Cohen's d_z = 0 [-0.5, 0]"
    assert p_text(0.99996) == "p = 1.000"
    tau = Tau(tau=float(np.float64(-0.0001)), p_value=0.9, n=4)
    assert tau.text().startswith("0.000 ")
