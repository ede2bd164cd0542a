"""Forms of the set-up pages: a system by its kind and settings (no JSON), questionnaire items by type."""

from __future__ import annotations

from django import forms

from studies.design.setup_services import QUESTIONNAIRES
from studies.errors import SystemConfigError
from studies.models import STUDY_DESIGNS, System
from studies.questionnaires.instruments import INSTRUMENTS
from studies.questionnaires.items import item_errors
from studies.search.engines.search import CONFIGURATIONS
from studies.search.generative_forms import GenerativeFields
from studies.search.systems import DEFAULT_CONFIGURATION, MAX_HTTP_TIMEOUT, system_config_problem


class SystemSetupForm(GenerativeFields, forms.Form):
    # The common fields first, then each kind's (a generative system's from GenerativeFields).
    field_order = ["code", "name", "backend", "configuration", "url_template", "timeout"]
    code = forms.CharField(max_length=40, help_text="Short, shown in the tables: A, B, bm25…")
    name = forms.CharField(max_length=200)
    backend = forms.ChoiceField(
        label="Kind", choices=System.Backend.choices, initial=System.Backend.BUILTIN, widget=forms.RadioSelect
    )
    configuration = forms.ChoiceField(
        label="Built-in configuration",
        required=False,
        initial=DEFAULT_CONFIGURATION,
        choices=[(name, f"{name}: {description}") for name, description in CONFIGURATIONS.items()],
        help_text="For a built-in system: how SessionLab's engine ranks the study's collection.",
    )
    url_template = forms.CharField(
        label="URL template",
        required=False,
        max_length=2000,
        help_text="For a system over HTTP: an http(s) URL with {query}, and optionally {page} and "
        "{page_size}, e.g. https://engine.example/search?q={query}&p={page}",
    )
    timeout = forms.FloatField(
        label="Timeout (seconds)", required=False, min_value=0.1, max_value=MAX_HTTP_TIMEOUT, initial=5.0
    )

    @staticmethod
    def initial_for(system: System) -> dict:
        config = system.config if isinstance(system.config, dict) else {}
        return {
            "code": system.code,
            "name": system.name,
            "backend": system.backend,
            "configuration": config.get("configuration", DEFAULT_CONFIGURATION),
            "url_template": config.get("url_template", ""),
            "timeout": config.get("timeout", 5.0),
            **GenerativeFields.initial_from(system),
        }

    def clean(self):
        cleaned = super().clean()
        backend = cleaned.get("backend")
        if backend == System.Backend.BUILTIN:
            config = {"configuration": cleaned.get("configuration") or DEFAULT_CONFIGURATION}
            field = "configuration"
        elif backend == System.Backend.HTTP:
            config = {"url_template": cleaned.get("url_template", "").strip()}
            if cleaned.get("timeout") is not None:
                config["timeout"] = cleaned["timeout"]
            field = "url_template"
        elif backend == System.Backend.GENERATIVE:
            config, field = self.generative_config(cleaned), "answerer"
        else:
            config, field = {}, None
        if backend:
            problem = system_config_problem(backend, config)
            if problem:
                self.add_error(self.config_field(backend, problem) or field, problem)
        cleaned["config"] = config
        return cleaned

    @staticmethod
    def config_field(backend: str | None, problem: str) -> str | None:
        """The field of this form a problem with a `backend` system's config is about (None: no field holds
        that config): the built-in configuration, an HTTP system's timeout or URL template."""
        if backend == System.Backend.BUILTIN:
            return "configuration"
        if backend == System.Backend.HTTP:
            return "timeout" if "timeout" in problem else "url_template"
        if backend == System.Backend.GENERATIVE:
            return GenerativeFields.field_of(problem)
        return None

    def add_refusal(self, error: Exception) -> None:
        """A service's refusal on this form: next to the field a SystemConfigError names (its kind, or the
        field holding the config it found wrong), else above the form."""
        field = None
        if isinstance(error, SystemConfigError):
            backend = self.cleaned_data.get("backend")
            field = (
                "backend" if error.field == "backend" else self.config_field(backend, str(error)) or "backend"
            )
        self.add_error(field, str(error))


class SystemTestForm(forms.Form):
    query = forms.CharField(max_length=500, label="Test query")


class ScenarioSetupForm(forms.Form):
    code = forms.CharField(max_length=40)
    title = forms.CharField(max_length=200)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), help_text="What the participant reads.")
    topic_id = forms.CharField(
        max_length=100, label="Topic", help_text="The qrels topic of its reference judgments."
    )
    practice = forms.BooleanField(
        required=False,
        label="Practice task",
        help_text="Worked first, before the counterbalanced tasks; logged like any task, never scored.",
    )


class DesignForm(forms.Form):
    design = forms.ChoiceField(choices=STUDY_DESIGNS, widget=forms.RadioSelect, label="Design")


class TopicPickForm(forms.Form):
    topics = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, choices=())

    def __init__(self, *args, topics, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["topics"].choices = [(t.topic_id, f"{t.topic_id}: {t.title[:120]}") for t in topics]


# Both add forms propose the same questionnaire: the one before the first task, where a study starts.
DEFAULT_WHICH = "questionnaire"


class QuestionnaireItemForm(forms.Form):
    """A question, added or edited (`original`: the name of the item edited). Each problem sits at its field;
    `taken` is the names the questionnaire's other items use."""

    which = forms.ChoiceField(
        label="Questionnaire", choices=list(QUESTIONNAIRES.items()), initial=DEFAULT_WHICH
    )
    original = forms.CharField(required=False, widget=forms.HiddenInput)
    name = forms.CharField(max_length=64, help_text="Its column in the exports: letters, digits and _.")
    label = forms.CharField(max_length=1000, label="Question")
    kind = forms.ChoiceField(
        choices=[
            ("scale", "Scale (radio buttons from min to max)"),
            ("choice", "Choice"),
            ("integer", "Whole number"),
            ("number", "Number"),
            ("text", "Text"),
        ]
    )
    min = forms.IntegerField(required=False, help_text="Scale and numbers.")
    max = forms.IntegerField(required=False)
    min_label = forms.CharField(
        max_length=200, required=False, label="Anchor at min", help_text="Scale: shown at its low end."
    )
    max_label = forms.CharField(
        max_length=200, required=False, label="Anchor at max", help_text="Scale: shown at its high end."
    )
    choices = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), required=False, help_text="Choice: one option a line."
    )
    other = forms.BooleanField(
        required=False,
        label="Other (please specify)",
        help_text="Choice: adds an option “Other” with a text box; the text is its own column.",
    )
    required = forms.BooleanField(required=False, initial=True)

    def __init__(self, *args, taken=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.taken = taken or (lambda which: set())
        if self["original"].value():  # an edit stays in its questionnaire
            self.fields["which"].widget = forms.HiddenInput()

    @classmethod
    def of_item(cls, which: str, item: dict, **kwargs) -> QuestionnaireItemForm:
        """The form filled with a stored item, to edit it."""
        initial = {
            "which": which,
            "original": item["name"],
            **{
                key: item.get(key)
                for key in ("name", "label", "kind", "min", "max", "min_label", "max_label")
            },
            "choices": "\n".join(str(c) for c in item.get("choices") or []),
            "other": item.get("other") is True,
            "required": item.get("required", True),
        }
        return cls(initial=initial, **kwargs)

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        item = self._item(cleaned)
        for problem in item_errors(item):
            if problem.startswith("choices") and "choices" in self.errors:
                continue
            self.add_error(next((f for f in _ITEM_FIELDS if problem.startswith(f)), None), problem)
        cleaned["item"] = item
        return cleaned

    def _item(self, cleaned: dict) -> dict:
        """The questionnaire item the fields describe; the form's own refusals added at their fields."""
        kind = cleaned["kind"]
        name = cleaned["name"].strip()
        item = {"name": name, "label": cleaned["label"].strip(), "kind": kind}
        if name != (cleaned.get("original") or "") and name in self.taken(cleaned["which"]):
            self.add_error("name", f"another question of this questionnaire is named {name}")
        if kind in ("scale", "integer", "number"):
            item.update({key: cleaned[key] for key in ("min", "max") if cleaned.get(key) is not None})
            low, high = cleaned.get("min"), cleaned.get("max")
            if low is not None and high is not None and low >= high:
                self.add_error("max", f"max ({high}) must be above min ({low})")
        for key in ("min_label", "max_label"):  # anchors on another kind: refused at their field
            if cleaned.get(key, "").strip():
                item[key] = cleaned[key].strip()
        if kind == "choice":
            item["choices"] = [
                line.strip() for line in cleaned.get("choices", "").splitlines() if line.strip()
            ]
            if not item["choices"]:
                self.add_error("choices", "a choice needs at least one option (one a line)")
        if cleaned.get("other"):
            item["other"] = True
        if not cleaned.get("required"):
            item["required"] = False
        return item


# The form fields an item_errors message can start with, in the order they are tried.
_ITEM_FIELDS = ("name", "label", "min_label", "max_label", "min", "max", "choices", "other")


class InstrumentForm(forms.Form):
    which = forms.ChoiceField(
        label="Questionnaire", choices=list(QUESTIONNAIRES.items()), initial=DEFAULT_WHICH
    )
    instrument = forms.ChoiceField(
        label="Template", choices=[(key, i.title) for key, i in INSTRUMENTS.items()], initial="demographics"
    )


class ConsentForm(forms.Form):
    consent_text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}), required=False, label="Consent text"
    )
    consent_version = forms.CharField(
        max_length=40, label="Version", help_text="Each participant's consent records the version they read."
    )


class TimeLimitForm(forms.Form):
    time_limit_minutes = forms.IntegerField(
        min_value=1,
        max_value=7 * 24 * 60,
        required=False,
        label="Time limit per scenario (minutes)",
        help_text="Empty: no limit.",
    )
