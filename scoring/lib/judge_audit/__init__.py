"""A robustness audit of an LLM judge: seeded variants of documents whose relevance people know
(`variants`), and what the judge made of them (`figures`): false-positive and false-negative rates per
variant and per scenario with bootstrap intervals, agreement per scenario, and a verdict with its threshold.
Pure: text and booleans in, numbers out; no Django. docs/assessing.md, "Robustness audit"."""

from .figures import (
    DEFAULT_RESAMPLES,
    DIRECTION,
    INCREASE_THRESHOLD,
    LEVEL,
    Observation,
    audit_figures,
    paired_increase,
    rate_interval,
)
from .variants import (
    INJECTIONS,
    NON_RELEVANT_VARIANTS,
    ORIGINAL,
    RELEVANT_VARIANTS,
    VARIANTS,
    injected,
    padded,
    query_terms,
    stuffed,
    truncated,
    variant_rng,
    variant_text,
)

__all__ = [
    "DEFAULT_RESAMPLES",
    "DIRECTION",
    "INCREASE_THRESHOLD",
    "INJECTIONS",
    "LEVEL",
    "NON_RELEVANT_VARIANTS",
    "ORIGINAL",
    "RELEVANT_VARIANTS",
    "VARIANTS",
    "Observation",
    "audit_figures",
    "injected",
    "padded",
    "paired_increase",
    "query_terms",
    "rate_interval",
    "stuffed",
    "truncated",
    "variant_rng",
    "variant_text",
]
