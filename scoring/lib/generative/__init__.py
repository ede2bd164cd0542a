"""Measures of what a generative system gave a participant: pure, no Django.

One module per measure, the formula in its docstring; every public name re-exported here.

- turns: session DCG over generative turns and results pages on one scale (sDCG's b and bq; variants
  `cited`, `cited_then_retrieved`, `exposed`).
- nuggets: nugget recall of answers, turns and sessions (TREC 2024 RAG, AutoNuggetizer: all, vital, weighted,
  each strict or with half credit for partial support).
- citations: citation support precision and recall over (sentence, cited document) pairs (TREC 2024 RAG
  support evaluation).
See docs/scoring-sessions.md, "Generative turns".
"""

from .citations import Answer, CitationError, CitationSupport, citation_support, session_citation_support
from .nuggets import (
    ASSIGNMENTS,
    CREDIT,
    IMPORTANCES,
    OKAY_WEIGHT,
    SCORE_NAMES,
    NuggetError,
    NuggetScores,
    best_assignment,
    mean_scores,
    nugget_curve,
    nugget_scores,
    session_nugget_scores,
)
from .turns import (
    TURN_FORMULATIONS,
    VARIANTS,
    GenerativeScores,
    ResultsPage,
    Step,
    Turn,
    TurnParams,
    first_citations,
    query_discount,
    score_generative_session,
    step_list,
)

__all__ = [
    "ASSIGNMENTS",
    "Answer",
    "CREDIT",
    "CitationError",
    "CitationSupport",
    "GenerativeScores",
    "IMPORTANCES",
    "NuggetError",
    "NuggetScores",
    "OKAY_WEIGHT",
    "ResultsPage",
    "SCORE_NAMES",
    "Step",
    "TURN_FORMULATIONS",
    "Turn",
    "TurnParams",
    "VARIANTS",
    "best_assignment",
    "citation_support",
    "first_citations",
    "mean_scores",
    "nugget_curve",
    "nugget_scores",
    "query_discount",
    "score_generative_session",
    "session_citation_support",
    "session_nugget_scores",
    "step_list",
]
