"""Statistical power of a study's comparison of two systems, in closed form and by Monte Carlo (numpy, scipy).

A study plan (docs/planning.md) asks: with N participants working the study's Latin-square design, how often
would the test find the difference between two systems? This module answers it three ways, all pure:

- `paired_t_power`: the closed form for a paired t-test whose participant differences are normal with mean
  `difference` and standard deviation `spread` (the noncentral t distribution, noncentrality d * sqrt(N) with
  d = difference / spread). It is the check on the Monte Carlo machinery.
- `monte_carlo_power`: draw `replications` studies of N participants from a sampler, apply the test to each,
  count rejections; the estimate comes with a Monte Carlo interval (Wilson, or Clopper-Pearson), since 500
  replications of a power of 0.8 are +-0.035 at 95%.
- samplers: `SpecifiedEffect` (a difference and a spread, normal) and `PilotModel` (resampling a pilot: the
  sessions of a real or simulated study, with participants and scenarios as the units of the design).

A design is `Design(scenario, system)`: two (participants, positions) integer arrays, one row per participant
in enrolment order (the study's own Latin-square rows), so that a count N studies the first N rows as the
study would enrol them. Values are drawn as (replications, N, positions) arrays and the tests run on all
replications at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

TESTS = ("paired_t", "wilcoxon", "welch")
TEST_LABELS = {
    "paired_t": "paired t-test (participant means)",
    "wilcoxon": "Wilcoxon signed-rank (participant means)",
    "welch": "Welch t-test (sessions, unpaired)",
}
ALTERNATIVES = ("two-sided", "greater")
INTERVALS = ("wilson", "clopper-pearson")


class PowerError(ValueError):
    """A plan that cannot be computed as asked (a count below 2, a pilot without both systems, ...)."""


# --- closed form --------------------------------------------------------------------------------------------


def paired_t_power(
    n: int, difference: float, spread: float, *, alpha: float = 0.05, alternative: str = "two-sided"
) -> float:
    """Power of the paired t-test on n participants whose differences are N(difference, spread^2).

    Under the alternative the statistic is noncentral t with n - 1 degrees of freedom and noncentrality
    difference / spread * sqrt(n); power is the probability it falls in the rejection region. "greater" tests
    second > first (a positive difference)."""
    _check_alpha(alpha)
    if n < 2:
        raise PowerError(f"a paired t-test needs at least 2 participants, got {n}")
    if spread <= 0:
        raise PowerError(f"the spread must be > 0, got {spread}")
    df = n - 1
    nc = difference / spread * np.sqrt(n)
    if alternative == "two-sided":
        critical = stats.t.ppf(1 - alpha / 2, df)
        return float(stats.nct.sf(critical, df, nc) + stats.nct.cdf(-critical, df, nc))
    if alternative == "greater":
        return float(stats.nct.sf(stats.t.ppf(1 - alpha, df), df, nc))
    raise PowerError(f"alternative {alternative!r} is not one of {', '.join(ALTERNATIVES)}")


def paired_t_smallest_n(
    difference: float,
    spread: float,
    target: float,
    *,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    largest: int = 100_000,
) -> int | None:
    """The smallest n >= 2 whose closed-form power reaches `target`; None if not even `largest` does."""
    _check_target(target)

    def reaches(n: int) -> bool:
        return paired_t_power(n, difference, spread, alpha=alpha, alternative=alternative) >= target

    # Doubling, then bisection: scipy's noncentral t is unreliable far past the crossing (a huge
    # noncentrality gives NaN), so the search never evaluates much beyond twice the answer.
    high = 2
    while not reaches(high):
        if high >= largest:
            return None
        high = min(largest, high * 2)
    low = max(2, high // 2)
    while low < high:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle + 1
    return low


# --- Monte Carlo intervals ----------------------------------------------------------------------------------


def proportion_interval(
    successes: int, trials: int, *, level: float = 0.95, method: str = "wilson"
) -> tuple[float, float]:
    """A confidence interval for a proportion: Wilson's score interval (good coverage, never outside [0, 1])
    or Clopper-Pearson's exact one (conservative)."""
    if trials < 1:
        raise PowerError("an interval needs at least one replication")
    if not 0 <= successes <= trials:
        raise PowerError(f"{successes} rejections out of {trials} replications")
    if method == "wilson":
        z = stats.norm.ppf(0.5 + level / 2)
        p = successes / trials
        denominator = 1 + z * z / trials
        centre = (p + z * z / (2 * trials)) / denominator
        half = z / denominator * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
        return float(max(0.0, centre - half)), float(min(1.0, centre + half))
    if method == "clopper-pearson":
        tail = (1 - level) / 2
        low = 0.0 if successes == 0 else stats.beta.ppf(tail, successes, trials - successes + 1)
        high = 1.0 if successes == trials else stats.beta.ppf(1 - tail, successes + 1, trials - successes)
        return float(low), float(high)
    raise PowerError(f"interval {method!r} is not one of {', '.join(INTERVALS)}")


@dataclass(frozen=True)
class PowerPoint:
    """The Monte Carlo power at one participant count."""

    n: int
    replications: int
    rejections: int
    low: float
    high: float

    @property
    def power(self) -> float:
        return self.rejections / self.replications


def power_point(
    n: int, rejections: int, replications: int, *, level: float = 0.95, method: str = "wilson"
) -> PowerPoint:
    low, high = proportion_interval(rejections, replications, level=level, method=method)
    return PowerPoint(n=n, replications=replications, rejections=rejections, low=low, high=high)


def smallest_count(points: Sequence[PowerPoint], target: float, *, surely: bool = False) -> int | None:
    """The smallest count whose power estimate reaches `target` (surely=True: whose whole Monte Carlo interval
    is at or above it), provided every larger count does too; None if none does. Requiring the larger counts
    too keeps one lucky estimate below the curve's real crossing from being reported."""
    _check_target(target)
    ordered = sorted(points, key=lambda point: point.n)
    found = None
    for point in reversed(ordered):
        if (point.low if surely else point.power) >= target:
            found = point.n
        else:
            break
    return found


# --- designs ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Design:
    """The design's rows in enrolment order: scenario[i, p] and system[i, p] are the scenario and system
    indices participant i works at position p (every participant works the same number of positions)."""

    scenario: np.ndarray
    system: np.ndarray

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[tuple[int, int]]]) -> Design:
        """From rows of (scenario index, system index) pairs, as `studies`' assignment plan gives them."""
        if not rows:
            raise PowerError("the design has no rows")
        width = len(rows[0])
        if width == 0 or any(len(row) != width for row in rows):
            raise PowerError("every row of the design must have the same number of positions (at least one)")
        cells = np.asarray(rows, dtype=np.int64)
        return cls(scenario=cells[:, :, 0], system=cells[:, :, 1])

    @property
    def rows(self) -> int:
        return int(self.scenario.shape[0])

    def first(self, n: int) -> Design:
        if n > self.rows:
            raise PowerError(f"the design has {self.rows} rows, fewer than the {n} participants asked for")
        return Design(scenario=self.scenario[:n], system=self.system[:n])


# --- the tests, on every replication at once ----------------------------------------------------------------


def _participant_differences(values: np.ndarray, design: Design, first: int, second: int) -> np.ndarray:
    """(R, N): each participant's mean on `second` minus their mean on `first`."""
    on_first = design.system == first
    on_second = design.system == second
    if (on_first.sum(axis=1) == 0).any() or (on_second.sum(axis=1) == 0).any():
        raise PowerError("some participant of the design never uses one of the two systems: no paired test")
    mean_first = (values * on_first).sum(axis=-1) / on_first.sum(axis=1)
    mean_second = (values * on_second).sum(axis=-1) / on_second.sum(axis=1)
    return mean_second - mean_first


def p_values(
    values: np.ndarray,
    design: Design,
    *,
    first: int,
    second: int,
    test: str = "paired_t",
    alternative: str = "two-sided",
) -> np.ndarray:
    """The test's p value for each replication: values is (R, N, positions) on the design's first N rows.
    NaN where the test is not defined (no variation at all): such a replication does not reject."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 3 or values.shape[1:] != design.scenario.shape:
        raise PowerError(f"values of shape {values.shape} do not fit a design of {design.scenario.shape}")
    if alternative not in ALTERNATIVES:
        raise PowerError(f"alternative {alternative!r} is not one of {', '.join(ALTERNATIVES)}")
    with np.errstate(invalid="ignore", divide="ignore"):
        if test == "paired_t":
            diffs = _participant_differences(values, design, first, second)
            n = diffs.shape[1]
            t = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / np.sqrt(n))
            if alternative == "greater":
                return stats.t.sf(t, n - 1)
            return 2 * stats.t.sf(np.abs(t), n - 1)
        if test == "wilcoxon":
            return _wilcoxon(_participant_differences(values, design, first, second), alternative)
        if test == "welch":
            a = values[:, design.system == first]
            b = values[:, design.system == second]
            if a.shape[1] < 2 or b.shape[1] < 2:
                raise PowerError("Welch's t-test needs at least two sessions on each system")
            return stats.ttest_ind(b, a, axis=1, equal_var=False, alternative=alternative).pvalue
    raise PowerError(f"test {test!r} is not one of {', '.join(TESTS)}")


def _wilcoxon(diffs: np.ndarray, alternative: str) -> np.ndarray:
    """scipy's signed-rank test row by row (exact for small samples without ties, as the dashboards use it);
    a row of zero differences has no p value."""
    out = np.full(diffs.shape[0], np.nan)
    for row, d in enumerate(diffs):
        if np.any(d != 0):
            out[row] = stats.wilcoxon(d, alternative=alternative).pvalue
    return out


def rejections(
    values: np.ndarray,
    design: Design,
    *,
    first: int,
    second: int,
    test: str = "paired_t",
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> int:
    _check_alpha(alpha)
    p = p_values(values, design, first=first, second=second, test=test, alternative=alternative)
    return int(np.count_nonzero(p < alpha))  # NaN compares False: not a rejection


# --- samplers -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecifiedEffect:
    """Normal data with a given effect: session value = u_i + difference * [system is `second`] + e.

    `spread` is the standard deviation of a participant's paired difference (their mean on `second` minus
    their mean on `first`), the quantity a paired t-test sees, so this sampler's paired t power is
    `paired_t_power` exactly. The session noise e is scaled to give it: sd(e) = spread / sqrt(1/m1 + 1/m2) for
    m1 and m2 sessions on each system. `between` is the standard deviation of the participants' own level u_i;
    it cancels in paired tests and matters only for Welch's t-test on sessions."""

    difference: float
    spread: float
    first: int = 0
    second: int = 1
    between: float = 0.0

    def __post_init__(self):
        if not self.spread > 0:
            raise PowerError(f"the spread must be > 0, got {self.spread}")
        if self.between < 0:
            raise PowerError(f"the between-participant spread must be >= 0, got {self.between}")
        if self.first == self.second:
            raise PowerError("compare two different systems")

    def sample(self, rng: np.random.Generator, design: Design, replications: int) -> np.ndarray:
        m1 = int((design.system[0] == self.first).sum())
        m2 = int((design.system[0] == self.second).sum())
        if m1 == 0 or m2 == 0:
            raise PowerError("the design never uses one of the two systems")
        noise = self.spread / np.sqrt(1 / m1 + 1 / m2)
        n, width = design.scenario.shape
        values = rng.normal(0.0, noise, size=(replications, n, width))
        values += self.difference * (design.system == self.second)
        if self.between:
            values += rng.normal(0.0, self.between, size=(replications, n, 1))
        return values


@dataclass(frozen=True, eq=False)
class PilotModel:
    """A pilot's sessions as an additive model, for resampling:
    value = mu + participant + scenario + system + e.

    Fitted by least squares on the pilot's sessions (`fit`). A simulated study of N participants then takes
    the design's first N rows and, for each replication, draws each participant's effect from the pilot's
    participants with replacement, each of the design's scenarios' effects from the pilot's scenarios with
    replacement (participants and scenarios are the random units of a within-subject design; `scenarios=False`
    keeps the study's own scenarios), and each session's residual from the pilot's residuals (scaled up by
    sqrt(n / residual df), since fitted residuals are smaller than the errors). The systems' effects stay as
    the pilot estimated them: that is the effect whose power is asked.

    system_effects[k] is the effect of the design's system k (the order the caller's design uses)."""

    mean: float
    participant_effects: np.ndarray
    scenario_effects: np.ndarray
    system_effects: np.ndarray
    residuals: np.ndarray
    scenarios: bool = True

    @classmethod
    def fit(
        cls,
        values: Sequence[float],
        participant: Sequence,
        scenario: Sequence,
        system: Sequence[int],
        *,
        systems: int,
        scenarios: bool = True,
    ) -> PilotModel:
        """`system` gives each session's design system index (0..systems-1); participant and scenario are any
        labels. PowerError when the pilot cannot say anything: fewer than two participants, a system without
        sessions, or no residual degrees of freedom."""
        y = np.asarray(values, dtype=np.float64)
        n = len(y)
        if not (len(participant) == len(scenario) == len(system) == n):
            raise PowerError("values, participants, scenarios and systems must have one entry per session")
        if not np.isfinite(y).all():
            raise PowerError("the pilot has a value that is not a finite number")
        p_codes, p_index = np.unique(np.asarray(participant, dtype=str), return_inverse=True)
        s_codes, s_index = np.unique(np.asarray(scenario, dtype=str), return_inverse=True)
        k_index = np.asarray(system, dtype=np.int64)
        if len(p_codes) < 2:
            raise PowerError(f"the pilot has {len(p_codes)} participant(s): resampling needs at least two")
        missing = [k for k in range(systems) if not (k_index == k).any()]
        if missing:
            raise PowerError(f"the pilot has no session on system(s) {missing}")
        columns = [np.ones(n)]
        columns += [(p_index == j).astype(float) for j in range(1, len(p_codes))]
        columns += [(s_index == j).astype(float) for j in range(1, len(s_codes))]
        columns += [(k_index == k).astype(float) for k in range(1, systems)]
        x = np.column_stack(columns)
        coef, _, rank, _ = np.linalg.lstsq(x, y, rcond=None)
        df = n - rank
        if df < 1:
            raise PowerError(
                f"the pilot's {n} sessions leave no residual degrees of freedom for "
                f"{len(p_codes)} participants, {len(s_codes)} scenarios and {systems} systems"
            )
        residuals = (y - x @ coef) * np.sqrt(n / df)
        a = np.concatenate([[0.0], coef[1 : len(p_codes)]])
        start = len(p_codes)
        b = np.concatenate([[0.0], coef[start : start + len(s_codes) - 1]])
        c = np.concatenate([[0.0], coef[start + len(s_codes) - 1 :]])
        # Centred, so mu is the level of an average participant on an average scenario.
        mean = coef[0] + a.mean() + b.mean() + c.mean()
        return cls(
            mean=float(mean),
            participant_effects=a - a.mean(),
            scenario_effects=b - b.mean(),
            system_effects=c - c.mean(),
            residuals=residuals,
            scenarios=scenarios,
        )

    def difference(self, first: int, second: int) -> float:
        """The pilot's estimate of second minus first (the effect whose power is computed)."""
        return float(self.system_effects[second] - self.system_effects[first])

    def sample(self, rng: np.random.Generator, design: Design, replications: int) -> np.ndarray:
        if design.system.max() >= len(self.system_effects):
            raise PowerError("the design uses a system the pilot has no effect for")
        n, width = design.scenario.shape
        people = rng.choice(self.participant_effects, size=(replications, n, 1))
        n_scenarios = int(design.scenario.max()) + 1
        if self.scenarios:
            topics = rng.choice(self.scenario_effects, size=(replications, n_scenarios))
        else:
            if n_scenarios > len(self.scenario_effects):
                raise PowerError("the design has more scenarios than the pilot")
            topics = np.broadcast_to(self.scenario_effects[:n_scenarios], (replications, n_scenarios))
        values = self.mean + people + topics[:, design.scenario] + self.system_effects[design.system]
        return values + rng.choice(self.residuals, size=(replications, n, width))


# --- the Monte Carlo loop -----------------------------------------------------------------------------------


def simulated_rejections(
    sampler,
    design: Design,
    n: int,
    replications: int,
    *,
    first: int,
    second: int,
    test: str = "paired_t",
    alpha: float = 0.05,
    alternative: str = "two-sided",
    seed: int | Sequence[int] = 0,
    batch: int = 500,
) -> int:
    """How many of `replications` simulated studies of the design's first n participants reject. Seeded
    (`seed` may be a tuple, e.g. (plan seed, n, chunk start), so chunks run anywhere give the same counts);
    drawn `batch` replications at a time to bound memory."""
    if n < 2:
        raise PowerError(f"a study needs at least 2 participants, got {n}")
    if replications < 1:
        raise PowerError(f"replications must be at least 1, got {replications}")
    rng = np.random.default_rng(seed)
    rows = design.first(n)
    total = 0
    for start in range(0, replications, batch):
        size = min(batch, replications - start)
        values = sampler.sample(rng, rows, size)
        total += rejections(
            values, rows, first=first, second=second, test=test, alpha=alpha, alternative=alternative
        )
    return total


def monte_carlo_power(
    sampler,
    design: Design,
    counts: Sequence[int],
    replications: int,
    *,
    first: int = 0,
    second: int = 1,
    test: str = "paired_t",
    alpha: float = 0.05,
    alternative: str = "two-sided",
    seed: int = 0,
    level: float = 0.95,
    method: str = "wilson",
) -> list[PowerPoint]:
    """The power curve: one PowerPoint per count, each from its own seeded stream."""
    return [
        power_point(
            n,
            simulated_rejections(
                sampler,
                design,
                n,
                replications,
                first=first,
                second=second,
                test=test,
                alpha=alpha,
                alternative=alternative,
                seed=(seed, n),
            ),
            replications,
            level=level,
            method=method,
        )
        for n in counts
    ]


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise PowerError(f"alpha must be between 0 and 1, got {alpha}")


def _check_target(target: float) -> None:
    if not 0 < target < 1:
        raise PowerError(f"the target power must be between 0 and 1, got {target}")
