"""The set-up page's fields of a generative system (docs/generative-systems.md), mixed into the system form
(studies/design/setup_forms.py) so that the page sets one up without JSON; the key is write-only."""

from __future__ import annotations

from django import forms

from studies.search.engines.answers import DEFAULT_PROMPT
from studies.search.generative_config import ANSWERERS, BOUNDS
from studies.search.generative_keys import key_still_bound

ANSWERER_LABELS = {
    "extractive": "Offline extractive (sentences of the top passages, cited; no model)",
    "rag": "Built-in RAG: an OpenAI-compatible chat-completions endpoint",
    "service": "The lab's own RAG service over HTTP",
}
# The form's field of each setting, where its name differs.
FIELD_OF = {"url": "service_url", "timeout": "answer_timeout"}


def _number(name: str, label: str, *, integer: bool = True):
    least, most, default = BOUNDS[name]
    if integer:
        return forms.IntegerField(
            label=label, required=False, min_value=int(least), max_value=int(most), initial=int(default)
        )
    return forms.FloatField(label=label, required=False, min_value=least, max_value=most, initial=default)


class GenerativeFields(forms.Form):
    answerer = forms.ChoiceField(
        label="Answerer",
        required=False,
        initial="extractive",
        choices=[(name, ANSWERER_LABELS[name]) for name in ANSWERERS],
        help_text="For a generative system: how the answer is made.",
    )
    retrieval = forms.CharField(
        label="Retrieval system",
        required=False,
        max_length=40,
        help_text="For the extractive and built-in RAG answerers: the code of this study's search system "
        "that finds the passages.",
    )
    k = _number("k", "Passages (k)")
    passage_chars = _number("passage_chars", "Passage length (characters)")
    endpoint_url = forms.CharField(
        label="Chat-completions endpoint",
        required=False,
        max_length=500,
        help_text="Built-in RAG: the OpenAI-compatible base URL; requests go to it + /chat/completions, e.g. "
        "http://127.0.0.1:11434/v1.",
    )
    model = forms.CharField(label="Model", required=False, max_length=200)
    temperature = _number("temperature", "Temperature", integer=False)
    max_tokens = _number("max_tokens", "Answer tokens at most")
    prompt_template = forms.CharField(
        label="Prompt",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 100}),
        help_text="Built-in RAG: placeholders {query}, {passages} (numbered [1], [2] ... with their document "
        "ids) and {history} (earlier turns). Empty: the default prompt.",
    )
    service_url = forms.CharField(
        label="RAG service URL",
        required=False,
        max_length=500,
        help_text="The lab's RAG service: the URL questions are POSTed to (the JSON protocol in the docs).",
    )
    answer_timeout = _number("timeout", "Answer timeout (seconds)")
    api_key = forms.CharField(
        max_length=4000,
        required=False,
        label="API key",
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Built-in RAG: stored encrypted and never shown again; empty keeps it. It is bound to the "
        "endpoint: changing the endpoint (scheme, host, port or path) stops it being sent until it is "
        "entered again.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored key")

    @staticmethod
    def initial_from(system) -> dict:
        config = system.config if isinstance(system.config, dict) else {}
        if system.backend != "generative":
            return {}
        return {
            "answerer": config.get("answerer", "extractive"),
            "retrieval": config.get("retrieval", ""),
            "k": config.get("k", BOUNDS["k"][2]),
            "passage_chars": config.get("passage_chars", BOUNDS["passage_chars"][2]),
            "endpoint_url": config.get("endpoint_url", ""),
            "model": config.get("model", ""),
            "temperature": config.get("temperature", BOUNDS["temperature"][2]),
            "max_tokens": config.get("max_tokens", BOUNDS["max_tokens"][2]),
            "prompt_template": config.get("prompt_template", ""),
            "service_url": config.get("url", ""),
            "answer_timeout": config.get("timeout", BOUNDS["timeout"][2]),
        }

    @staticmethod
    def key_state(system) -> str:
        """What the page says of the key: never the key."""
        if not system.api_key_encrypted:
            return "no key"
        return (
            "key set"
            if key_still_bound(system.api_key_encrypted, system.config.get("endpoint_url", ""))
            else ("key stored for another endpoint (not sent; enter it again)")
        )

    def generative_config(self, cleaned: dict) -> dict:
        """The config of the answerer chosen: only its own settings, the blank ones left to their defaults."""
        answerer = cleaned.get("answerer") or "extractive"
        config: dict = {"answerer": answerer}
        wanted = {
            "extractive": ("retrieval", "k", "passage_chars"),
            "rag": (
                "retrieval",
                "k",
                "passage_chars",
                "endpoint_url",
                "model",
                "temperature",
                "max_tokens",
                "prompt_template",
                "timeout",
            ),
            "service": ("url", "k", "timeout"),
        }[answerer]
        for name in wanted:
            value = cleaned.get(FIELD_OF.get(name, name))
            if isinstance(value, str):
                value = value.replace("\r\n", "\n") if name == "prompt_template" else value.strip()
            if value not in (None, ""):
                config[name] = value
        if answerer == "rag" and config.get("prompt_template") is None:
            config["prompt_template"] = DEFAULT_PROMPT
        return config

    @staticmethod
    def field_of(problem: str) -> str:
        """The field a generative config's problem is about (its message starts with the setting's name)."""
        name = problem.split(" ", 1)[0].rstrip(":")
        name = FIELD_OF.get(name, name)
        return name if name in GenerativeFields.base_fields else "answerer"
