"""Significance tests between systems on per-session values: numpy and scipy only, no Django. One module per
concern, the formula in its docstring; every public name is re-exported here.

- blocks: Friedman (Järvelin & Kekäläinen 2002 tested methods with it on per-topic averages) and, as in the
  2002 paper, two-way ANOVA without replication, on the blocks' means (blocks: the design's participants or
  scenarios, each cell the mean of the block's sessions on a system; the randomized complete block design).
- comparison: `compare_systems`, every test for one summary: the above, or one-way ANOVA over the sessions
  (scipy.stats.f_oneway); paired t-test and Wilcoxon signed-rank for each pair of systems, paired by block (in
  a within-subject design each participant used every system, so their means pair), or Welch's t unpaired.
- bootstrap: the mean difference of each pair with a bootstrap 95% confidence interval (resampling blocks
  when paired, sessions otherwise; seeded, so the interval is the same every time).
- What reviewers ask for on top: Holm and Benjamini-Hochberg adjusted p-values wherever more than one pair
  is tested, each test's family being its pairs (multiplicity); effect sizes with 95% intervals, Cohen's d_z
  for the paired t-test, rank-biserial r for Wilcoxon, Kendall's W for Friedman (effects); a paired
  randomization, sign-flip permutation, test (permutation); and a linear mixed model with crossed random
  intercepts for participant and scenario (statsmodels MixedLM), fitted on the sessions themselves, which is
  what a within-subject Latin-square design calls for (mixed).
- participant_means: the paired test of participant means that leads a within-subject study's statistics
  (each participant's mean per system, participants with both; paired t with its 95% t interval and d_z,
  Wilcoxon signed-rank with its exact or approximate p stated).
Every result carries a plain-words reading and names its unit of averaging; a comparison uses one unit
throughout (sessions when unpaired, the blocks' means when paired), so its means, tests and differences cannot
point in different directions because they averaged different things.
"""

from .blocks import anova_blocks, block_means, friedman, row_ties
from .bootstrap import bootstrap_counts, bootstrap_difference, percentile_interval, resample_ranks
from .comparison import (
    ALPHA,
    Comparison,
    Difference,
    TestResult,
    adjust_families,
    compare_systems,
    p_text,
    verdict,
)
from .effects import Effect, cohens_dz, kendalls_w, rank_biserial
from .mixed import (
    MIXED_FORMULA,
    MIXED_MAX_SESSIONS,
    MIXED_VARIANCE_COMPONENTS,
    MIXED_WORDS,
    MixedEffect,
    MixedModel,
    mixed_model,
)
from .multiplicity import benjamini_hochberg, holm
from .participant_means import (
    PAIRED_WHY,
    WILCOXON_EXACT_UP_TO,
    PairedMeans,
    paired_means,
    paired_participant_means,
    wilcoxon_method,
)
from .permutation import EXACT_UP_TO, Permutation, paired_permutation_test

__all__ = [
    "ALPHA",
    "Comparison",
    "Difference",
    "EXACT_UP_TO",
    "Effect",
    "MIXED_FORMULA",
    "MIXED_MAX_SESSIONS",
    "MIXED_VARIANCE_COMPONENTS",
    "MIXED_WORDS",
    "MixedEffect",
    "MixedModel",
    "PAIRED_WHY",
    "PairedMeans",
    "Permutation",
    "TestResult",
    "WILCOXON_EXACT_UP_TO",
    "adjust_families",
    "anova_blocks",
    "benjamini_hochberg",
    "block_means",
    "bootstrap_counts",
    "bootstrap_difference",
    "cohens_dz",
    "compare_systems",
    "friedman",
    "holm",
    "kendalls_w",
    "mixed_model",
    "p_text",
    "paired_means",
    "paired_participant_means",
    "paired_permutation_test",
    "percentile_interval",
    "rank_biserial",
    "resample_ranks",
    "row_ties",
    "verdict",
    "wilcoxon_method",
]
