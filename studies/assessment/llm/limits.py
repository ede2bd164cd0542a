"""The bounds of an LLM assessor's settings, in one home: the page's form shows them (min/max), and the set-up
service enforces them whoever calls it (the page, the API, a command, an archive), each refusal naming its
field (docs/security.md, "Many labs on one server")."""

from django.conf import settings

# field: (least, most)
RANGES: dict[str, tuple[float, float]] = {
    "passage_max_chars": (100, 200_000),
    "requests_per_minute": (1, 100_000),
    "max_retries": (0, 10),
    "timeout_seconds": (1, 3600),
    "max_answer_tokens": (1, 100_000),
    "temperature": (0, 2),
}


def prompt_template_max_chars() -> int:
    """A template is sent with every request: LLM_PROMPT_TEMPLATE_MAX_CHARS (20,000) is ample."""
    return settings.LLM_PROMPT_TEMPLATE_MAX_CHARS
