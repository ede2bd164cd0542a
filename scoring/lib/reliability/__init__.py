"""Inter-rater reliability with its uncertainty: every agreement coefficient as an `AgreementEstimate`
(coefficient, estimate, se, ci_low, ci_high, p_value, method, n). Pure numpy and scipy, no Django; the
assessment pages (studies/assessment/agreement_tables.py) and scripts call the same functions.

- estimate: the dataclass, the t interval and p-value used with an analytic variance.
- weights: agreement weights for ordered grades (unweighted, linear, quadratic, ordinal; Gwet 2014 ch. 3).
- two_graders: from a pair's contingency table, Cohen's (weighted) kappa, Gwet's AC1/AC2, Scott's pi,
  Brennan-Prediger and percent agreement, with Gwet's analytic variances (irrCAC's *.table functions).
- many_graders: from graders x documents data with missing grades, Fleiss' kappa, Gwet's AC1/AC2,
  Krippendorff's nominal and interval alpha, Brennan-Prediger and percent agreement, with Gwet's analytic
  variances (irrCAC's *.raw functions).
- bootstrap: Krippendorff's alpha at any level (ordinal too) with a seeded bootstrap over documents.
- suite: the coefficients reported together, for a pair and over all graders (the page, its CSV and
  `python -m scoring agreement`), over all graders on the documents graded twice or more.
The point estimates equal scoring/lib/agreement.py's (weighted_kappa, krippendorff_alpha) wherever both
compute one. docs/assessing.md ("Agreement") gives the formulas, sources and how to read them.
"""

from .bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, krippendorff_alpha_bootstrap
from .estimate import AgreementEstimate, t_estimate
from .many_graders import (
    brennan_prediger_many_estimate,
    category_counts,
    fleiss_kappa_estimate,
    gwet_ac_many_estimate,
    krippendorff_alpha_analytic,
    percent_agreement_many_estimate,
)
from .suite import (
    ESTIMATE_COLUMNS,
    PAIR_COEFFICIENTS,
    all_estimates,
    estimate_cells,
    graded_twice_or_more,
    pair_estimates,
)
from .two_graders import (
    brennan_prediger_estimate,
    cohen_kappa_estimate,
    gwet_ac_estimate,
    percent_agreement_estimate,
    scott_pi_estimate,
)
from .weights import WEIGHTINGS, agreement_weights

__all__ = [
    "DEFAULT_REPLICATES",
    "DEFAULT_SEED",
    "ESTIMATE_COLUMNS",
    "PAIR_COEFFICIENTS",
    "WEIGHTINGS",
    "AgreementEstimate",
    "agreement_weights",
    "all_estimates",
    "brennan_prediger_estimate",
    "brennan_prediger_many_estimate",
    "category_counts",
    "cohen_kappa_estimate",
    "estimate_cells",
    "fleiss_kappa_estimate",
    "graded_twice_or_more",
    "gwet_ac_estimate",
    "gwet_ac_many_estimate",
    "krippendorff_alpha_analytic",
    "krippendorff_alpha_bootstrap",
    "pair_estimates",
    "percent_agreement_estimate",
    "percent_agreement_many_estimate",
    "scott_pi_estimate",
    "t_estimate",
]
