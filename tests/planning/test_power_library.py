"""scoring/lib/power.py without a database: the Monte Carlo planner agrees with the closed form, the intervals
and the resampling of a pilot are what they say."""

import numpy as np
import pytest
from scipy import stats

from scoring.lib import power
from scoring.lib.power import Design, PilotModel, PowerError, SpecifiedEffect


def _design(n: int) -> Design:
    """Four scenarios, two systems, two sessions each, rotated like a Latin square's rows."""
    orders = [[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
    systems = [[0, 0, 1, 1], [1, 1, 0, 0]]
    return Design.from_rows([list(zip(orders[i % 4], systems[(i // 4) % 2], strict=True)) for i in range(n)])


@pytest.mark.parametrize(
    ("difference", "n"), [(0.3, 10), (0.5, 20), (0.8, 12), (0.5, 40), (1.0, 6), (0.0, 15)]
)
def test_monte_carlo_paired_t_power_equals_the_noncentral_t_power(difference, n):
    replications = 4000
    sampler = SpecifiedEffect(difference=difference, spread=1.0, between=0.7)
    hits = power.simulated_rejections(sampler, _design(n), n, replications, first=0, second=1, seed=(21, n))
    exact = power.paired_t_power(n, difference, 1.0)
    low, high = power.proportion_interval(hits, replications, level=0.999, method="clopper-pearson")
    assert low <= exact <= high, (hits / replications, exact)
    # and within 3.5 standard errors of the exact value (a one-off of the degrees of freedom is not)
    assert abs(hits / replications - exact) <= 3.5 * np.sqrt(exact * (1 - exact) / replications) + 1e-9


def test_one_sided_monte_carlo_power_equals_the_closed_form():
    hits = power.simulated_rejections(
        SpecifiedEffect(0.4, 1.0), _design(16), 16, 4000, first=0, second=1, alternative="greater", seed=3
    )
    exact = power.paired_t_power(16, 0.4, 1.0, alternative="greater")
    assert abs(hits / 4000 - exact) <= 3.5 * np.sqrt(exact * (1 - exact) / 4000)


def test_closed_form_power_matches_a_textbook_value_and_the_null_gives_alpha():
    # Cohen's d = 0.5 with 34 pairs: power about 0.80 for a two-sided 5% paired t-test (G*Power: 0.8078).
    assert power.paired_t_power(34, 0.5, 1.0) == pytest.approx(0.8078, abs=0.001)
    assert power.paired_t_power(12, 0.0, 2.0) == pytest.approx(0.05, abs=1e-9)
    assert power.paired_t_smallest_n(0.5, 1.0, 0.8) == 34
    assert power.paired_t_smallest_n(0.0, 1.0, 0.8, largest=1000) is None


def test_the_vectorised_tests_give_scipys_p_values():
    design = _design(9)
    values = np.random.default_rng(5).normal(size=(3, 9, 4))
    diffs = [(v * (design.system == 1)).sum(1) / 2 - (v * (design.system == 0)).sum(1) / 2 for v in values]
    paired = power.p_values(values, design, first=0, second=1, test="paired_t")
    assert paired == pytest.approx([stats.ttest_rel(d, np.zeros(9)).pvalue for d in diffs])
    wilcoxon = power.p_values(values, design, first=0, second=1, test="wilcoxon")
    assert wilcoxon == pytest.approx([stats.wilcoxon(d).pvalue for d in diffs])
    welch = power.p_values(values, design, first=0, second=1, test="welch")
    expected = [
        stats.ttest_ind(v[design.system == 1], v[design.system == 0], equal_var=False).pvalue for v in values
    ]
    assert welch == pytest.approx(expected)


def test_a_replication_without_variation_does_not_reject():
    design = _design(4)
    assert power.rejections(np.zeros((2, 4, 4)), design, first=0, second=1, test="paired_t") == 0
    assert power.rejections(np.zeros((2, 4, 4)), design, first=0, second=1, test="wilcoxon") == 0


def test_wilson_and_clopper_pearson_intervals_are_the_textbook_ones():
    assert power.proportion_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert power.proportion_interval(8, 10, method="clopper-pearson") == pytest.approx(
        (0.4439, 0.9748), abs=1e-4
    )
    assert power.proportion_interval(0, 50) == pytest.approx((0.0, 0.0713), abs=1e-4)
    assert power.proportion_interval(50, 50, method="clopper-pearson")[1] == 1.0
    with pytest.raises(PowerError):
        power.proportion_interval(3, 0)


def test_the_smallest_count_needs_every_larger_count_to_reach_the_target():
    points = [
        power.power_point(n, hits, 100) for n, hits in [(8, 40), (16, 81), (24, 78), (32, 90), (40, 97)]
    ]
    assert power.smallest_count(points, 0.8) == 32  # 16 reached 0.81 by luck: 24 fell back below
    assert power.smallest_count(points, 0.8, surely=True) == 32  # 90/100: Wilson 0.826 to 0.945
    assert power.smallest_count(points, 0.85, surely=True) == 40
    assert power.smallest_count(points, 0.99) is None


def test_a_pilot_fit_recovers_the_additive_effects():
    rng = np.random.default_rng(8)
    design = _design(40)
    people = rng.normal(0, 1, 40)
    topics = np.array([0.5, -0.2, 0.1, -0.4])
    values = (
        2 + people[:, None] + topics[design.scenario] + 0.3 * design.system + rng.normal(0, 0.05, (40, 4))
    )
    model = PilotModel.fit(
        values.ravel(), np.repeat(np.arange(40), 4), design.scenario.ravel(), design.system.ravel(), systems=2
    )
    assert model.difference(0, 1) == pytest.approx(0.3, abs=0.02)
    assert model.scenario_effects == pytest.approx(topics - topics.mean(), abs=0.02)
    assert model.residuals.std() == pytest.approx(0.05, rel=0.2)


def test_resampling_a_large_normal_pilot_gives_the_closed_form_power():
    """A pilot drawn from the specified model: resampling
    it must give (nearly) the same power as the model."""
    rng = np.random.default_rng(13)
    pilot_design = _design(400)
    pilot = SpecifiedEffect(difference=0.4, spread=1.0, between=1.0).sample(rng, pilot_design, 1)[0]
    model = PilotModel.fit(
        pilot.ravel(),
        np.repeat(np.arange(400), 4),
        pilot_design.scenario.ravel(),
        pilot_design.system.ravel(),
        systems=2,
        scenarios=False,
    )
    n = 30
    hits = power.simulated_rejections(model, _design(n), n, 3000, first=0, second=1, seed=2)
    # The pilot's own estimates of the difference and of the spread set the expected power.
    spread = model.residuals.std() * np.sqrt(1 / 2 + 1 / 2)
    exact = power.paired_t_power(n, model.difference(0, 1), spread)
    assert abs(hits / 3000 - exact) <= 4 * np.sqrt(exact * (1 - exact) / 3000)


def test_resampling_scenarios_adds_their_variation():
    design = _design(8)
    model = PilotModel(
        mean=0.0,
        participant_effects=np.zeros(3),
        scenario_effects=np.array([-1.0, 1.0]),
        system_effects=np.zeros(2),
        residuals=np.zeros(3),
    )
    values = model.sample(np.random.default_rng(1), design, 200)
    # each replication draws one effect per design scenario, the same for every participant who works it
    for replication in values[:5]:
        for scenario in range(4):
            assert len(set(replication[design.scenario == scenario].tolist())) == 1
    assert len({tuple(v[0]) for v in values}) > 1


def test_a_pilot_that_cannot_be_resampled_is_refused_with_the_reason():
    with pytest.raises(PowerError, match="1 participant"):
        PilotModel.fit([1.0, 2.0], ["P1", "P1"], ["S1", "S2"], [0, 1], systems=2)
    with pytest.raises(PowerError, match=r"no session on system\(s\) \[1\]"):
        PilotModel.fit([1.0, 2.0, 3.0], ["P1", "P2", "P3"], ["S1", "S1", "S2"], [0, 0, 0], systems=2)
    with pytest.raises(PowerError, match="residual degrees of freedom"):
        PilotModel.fit(
            [1.0, 2.0, 3.0, 4.0], ["P1", "P1", "P2", "P2"], ["S1", "S2", "S1", "S2"], [0, 1, 1, 0], systems=2
        )


def test_bad_plans_are_refused():
    with pytest.raises(PowerError, match="at least 2"):
        power.paired_t_power(1, 0.5, 1.0)
    with pytest.raises(PowerError, match="spread"):
        SpecifiedEffect(difference=0.5, spread=0.0)
    with pytest.raises(PowerError, match="fewer than the 9"):
        _design(8).first(9)
    with pytest.raises(PowerError, match="test 'anova'"):
        power.p_values(np.zeros((1, 4, 4)), _design(4), first=0, second=1, test="anova")
