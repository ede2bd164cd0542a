"""The planner's pages: the form and the study's plans, a plan's page (progress, curve, notes), its status,
curve JSON and CSV. Thin: an access-checked fetch (404 for a study the researcher cannot see), a service or a
selector, a response."""

from __future__ import annotations

import csv
import hashlib
import io
import json

from django import forms
from django.core.cache import cache
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.functional import cached_property

from sessionlab.spreadsheet import safe_rows
from studies.accounts.access import researcher_required, study_for_researcher
from studies.models import System
from studies.population import study_population
from studies.simulation.searchers import QUERY_STRATEGIES, STOPPING_RULES

from ..freshness import run_freshness
from ..lib.power import ALTERNATIVES, TEST_LABELS
from ..lib.session import SUMMARIES, SUMMARY_LABELS
from ..models import PowerPlan, ScoringRun
from . import charts, selectors, services
from .designs import block_size
from .simulate import BEHAVIOUR

CACHE_SECONDS = 24 * 3600
EFFECTS = PowerPlan.Effect.choices
STRATEGY_FIELDS = (
    "queries",
    "query_length",
    "stopping",
    "depth",
    "satisfied_after",
    "frustrated_after",
    "max_queries",
    "time_limit",
    "agreement",
)
COST_FIELDS = ("query", "snippet", "document", "judgment")
SPECIFIED, PILOT, SIMULATED = PowerPlan.Effect.SPECIFIED, PowerPlan.Effect.PILOT, PowerPlan.Effect.SIMULATED
# The fields that only some modes (effects) read, in the fieldsets the page shows for those modes only
# (static/js/planning-form.js); a mode's form ignores the others' fields, whatever they hold.
MODE_FIELDSETS = (
    ((SPECIFIED,), "Specified effect", ("difference", "spread", "between")),
    ((PILOT, SIMULATED), "The pilot's sessions", ("run", "population")),
    (
        (SIMULATED,),
        "Simulated searchers",
        ("simulated_participants", *STRATEGY_FIELDS, *(f"cost_{name}" for name in COST_FIELDS)),
    ),
)
MODE_FIELDS = {name: modes for modes, _legend, names in MODE_FIELDSETS for name in names}


class PlanForm(forms.Form):
    label = forms.CharField(max_length=200, required=False)
    summary = forms.ChoiceField(
        choices=[(s, SUMMARY_LABELS[s]) for s in SUMMARIES],
        initial="normalized_final",
        label="Measure (per-session summary of the scoring run)",
    )
    test = forms.ChoiceField(choices=list(TEST_LABELS.items()), initial="paired_t")
    alternative = forms.ChoiceField(
        choices=[(a, a) for a in ALTERNATIVES],
        initial="two-sided",
        help_text="greater: a one-sided test that the second system scores higher",
    )
    # The querysets are the study's, set in __init__.
    first_system: forms.ModelChoiceField[System] = forms.ModelChoiceField(
        queryset=None, empty_label=None, label="First system"
    )
    second_system: forms.ModelChoiceField[System] = forms.ModelChoiceField(
        queryset=None, empty_label=None, label="Second system"
    )
    effect = forms.ChoiceField(choices=EFFECTS, initial=PowerPlan.Effect.SPECIFIED)
    # Defaults that compute (d = 0.5): the untouched form draws a curve that reaches 80% within the counts.
    difference = forms.FloatField(
        required=False, initial=0.1, help_text="Specified effect: second minus first on the measure"
    )
    spread = forms.FloatField(
        required=False,
        initial=0.2,
        help_text="Specified effect: standard deviation of a participant's "
        "paired difference (their mean on the second system minus their mean on the first)",
    )
    between = forms.FloatField(
        initial=0.0,
        min_value=0.0,
        label="Between-participant spread",
        help_text="Specified effect, Welch's test only: standard deviation of participants' own levels",
    )
    run: forms.ModelChoiceField[ScoringRun] = forms.ModelChoiceField(
        queryset=None,
        required=False,
        empty_label="the study's default run",
        help_text="Pilot: the scoring run whose sessions are resampled",
    )
    population = forms.CharField(
        required=False,
        max_length=200,
        label="Population (pilot)",
        help_text="Whose sessions a pilot resamples: completers, itt (intention to treat), or either with "
        "leave-outs after a colon, e.g. itt:excluded,timed_out; empty: the study's default",
    )
    simulated_participants = forms.IntegerField(
        required=False,
        min_value=2,
        max_value=services.MAX_SIMULATED,
        help_text="Simulated: searchers in the pool that is resampled (empty: sixteen blocks of the design)",
    )
    queries = forms.ChoiceField(
        required=False,
        choices=[(q, q) for q in QUERY_STRATEGIES],
        initial="scenario",
        label="Queries",
        help_text="Simulated: scenario (the demo's), terms (ranked scenario terms), relevant "
        "(and terms of the relevant documents)",
    )
    query_length = forms.IntegerField(
        required=False, initial=3, min_value=1, max_value=10, help_text="Simulated: terms per query"
    )
    stopping = forms.ChoiceField(
        required=False,
        choices=[(r, r) for r in STOPPING_RULES],
        initial="patience",
        help_text="Simulated: when a searcher leaves a result list",
    )
    depth = forms.IntegerField(
        required=False,
        initial=10,
        min_value=1,
        max_value=10,
        help_text="Simulated: snippets read (fixed), at most (the other rules)",
    )
    satisfied_after = forms.IntegerField(
        required=False, initial=2, min_value=1, help_text="Simulated: relevant documents (satisfaction)"
    )
    frustrated_after = forms.IntegerField(
        required=False, initial=5, min_value=1, help_text="Simulated: non-relevant snippets (frustration)"
    )
    max_queries = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=50,
        help_text="Simulated: queries per session at most (empty: each searcher's patience)",
    )
    time_limit = forms.FloatField(
        required=False, min_value=1, help_text="Simulated: seconds of actions per session"
    )
    cost_query = forms.FloatField(
        required=False, initial=10.0, min_value=0, help_text="Simulated: seconds to issue a query"
    )
    cost_snippet = forms.FloatField(
        required=False, initial=2.0, min_value=0, help_text="Simulated: seconds to read a snippet"
    )
    cost_document = forms.FloatField(
        required=False, initial=20.0, min_value=0, help_text="Simulated: seconds to read a document"
    )
    cost_judgment = forms.FloatField(
        required=False, initial=3.0, min_value=0, help_text="Simulated: seconds to judge it"
    )
    agreement = forms.FloatField(
        required=False,
        min_value=0.01,
        max_value=1.0,
        help_text="Simulated: share of judgments equal to the reference (empty: each searcher's own slips)",
    )
    counts = forms.CharField(help_text="Participant counts, separated by commas (at least 2 each)")
    replications = forms.IntegerField(
        initial=500, min_value=1, max_value=services.MAX_REPLICATIONS, help_text="Simulated studies per count"
    )
    alpha = forms.FloatField(initial=0.05, min_value=0.0001, max_value=0.5)
    target = forms.FloatField(initial=0.8, min_value=0.01, max_value=0.999, label="Target power")
    seed = forms.IntegerField(initial=2026, min_value=0, max_value=2**31 - 1)

    def __init__(self, *args, study, **kwargs):
        super().__init__(*args, **kwargs)
        systems = study.systems.order_by("id")
        self.fields["first_system"].queryset = systems
        self.fields["second_system"].queryset = systems
        if systems.count() >= 2:
            self.fields["second_system"].initial = systems[1].pk
        self.fields["run"].queryset = ScoringRun.objects.filter(study=study, status=ScoringRun.Status.DONE)
        self.fields["counts"].initial = ",".join(str(n) for n in default_counts(study))
        self.fields["population"].initial = study_population(study).code()

    def mode_fieldsets(self) -> list[dict]:
        """The page's fieldsets: the fields every mode reads, then each group of one or two modes'."""
        grouped = set(MODE_FIELDS)
        effect = self["effect"].value() or SPECIFIED
        sets: list[dict] = [
            {"modes": "", "legend": "", "fields": [self[n] for n in self.fields if n not in grouped]}
        ]
        for modes, legend, names in MODE_FIELDSETS:
            sets.append(
                {
                    "modes": " ".join(modes),
                    "legend": legend,
                    "fields": [self[name] for name in names],
                    "hidden": effect not in modes,
                }
            )
        return sets

    def clean(self):
        cleaned = super().clean()
        effect = cleaned.get("effect")
        for name, modes in MODE_FIELDS.items():
            if effect and effect not in modes:  # another mode's field: neither read nor refused
                self.errors.pop(name, None)
                cleaned[name] = None
        return cleaned

    def clean_counts(self):
        try:
            return [int(part) for part in self.cleaned_data["counts"].replace(" ", "").split(",") if part]
        except ValueError:
            raise forms.ValidationError(
                "counts are whole numbers separated by commas, e.g. 8,16,24"
            ) from None

    def plan_options(self) -> dict:
        """The service's keyword arguments: the strategy fields become one `strategy` mapping."""
        data = dict(self.cleaned_data)
        # An empty field leaves the strategy's default (searchers.Strategy, the demo's behaviour).
        strategy = {name: value for name in STRATEGY_FIELDS if (value := data.pop(name)) not in (None, "")}
        strategy["costs"] = {
            name: value for name in COST_FIELDS if (value := data.pop(f"cost_{name}")) is not None
        }
        data["between"] = data["between"] or 0.0  # Welch's spread: 0 where the mode has none
        if data["effect"] == PowerPlan.Effect.SIMULATED:
            data["strategy"] = strategy
            data["simulated_participants"] = data["simulated_participants"] or 0
        else:
            data.pop("simulated_participants")
        return data


def default_counts(study) -> list[int]:
    """Ten counts, each a whole number of the design's balanced blocks (4 scenarios x 2 systems: 8, 16, ...
    80)."""
    block = block_size(study.scenarios.filter(practice=False).count(), study.systems.count())
    return [block * i for i in range(1, 11)]


@researcher_required
def planner(request, slug):
    study = study_for_researcher(request, slug)
    form = PlanForm(request.POST or None, study=study)
    if request.method == "POST" and form.is_valid():
        data = form.plan_options()
        try:
            plan, _reused = services.power_plan_create(study=study, created_by=request.user, **data)
        except services.PlanningError as exc:
            field, _, _ = str(exc).partition(":")
            form.add_error(field if field in form.fields else None, str(exc))
        else:
            return redirect("scoring:planning_plan", slug=study.slug, plan_id=plan.pk)
    plans = PowerPlan.objects.filter(study=study).select_related("first_system", "second_system")[:50]
    # A pilot resamples the default run unless another is chosen: say whether its scores are current.
    default_run = (
        ScoringRun.objects.filter(study=study, is_default=True).select_related("reference_version").first()
    )
    return render(
        request,
        "scoring/planning.html",
        {
            "study": study,
            "form": form,
            "plans": plans,
            "default_run": default_run,
            "default_run_freshness": run_freshness(default_run) if default_run is not None else None,
            "searchers_calibration": selectors.searchers_calibration_lines(study),
        },
        status=400 if form.errors else 200,
    )


def _plan_for(request, slug, plan_id) -> PowerPlan:
    study = study_for_researcher(request, slug)
    return get_object_or_404(
        PowerPlan.objects.select_related("study", "first_system", "second_system", "run"),
        pk=plan_id,
        study=study,
    )


class _Curve:
    """A plan's curve, figure and notes; cached once the plan is done (its results never change then)."""

    def __init__(self, plan: PowerPlan):
        self.plan = plan

    @cached_property
    def payload(self) -> dict:
        # The comparison with the real sessions is computed again after a withdrawal (services.
        # power_plans_withdraw) while the plan stays finished: its digest is in the key.
        comparison = hashlib.sha1(
            json.dumps((self.plan.sample or {}).get("pilot"), sort_keys=True, default=str).encode()
        ).hexdigest()[:16]
        key = (
            f"scoring:planning:{self.plan.pk}:{self.plan.finished_at.timestamp()}:{comparison}"
            if self.plan.is_finished and self.plan.finished_at is not None  # a finished plan has its time
            else None
        )
        cached = cache.get(key) if key else None
        if cached is not None:
            return cached
        curve = selectors.plan_curve(self.plan)
        payload = {
            "figure": charts.plan_figure(self.plan, curve),
            "notes": charts.plan_notes(self.plan, curve),
            "header": charts.CSV_HEADER,
            "rows": charts.plan_rows(self.plan, curve),
            "complete": curve.complete,
        }
        if key and curve.complete:
            cache.set(key, payload, CACHE_SECONDS)
        return payload


@researcher_required
def plan_detail(request, slug, plan_id):
    plan = _plan_for(request, slug, plan_id)
    curve = _Curve(plan).payload
    return render(
        request,
        "scoring/planning_plan.html",
        {
            "study": plan.study,
            "plan": plan,
            "notes": curve["notes"],
            "header": curve["header"],
            "rows": curve["rows"],
            "test_label": TEST_LABELS.get(plan.test, plan.test),
            "summary_label": SUMMARY_LABELS.get(plan.summary, plan.summary),
            "calibration": calibration_rows(plan),
            "searchers_calibration": selectors.searchers_calibration_lines(plan.study),
            "progress_unit": (
                "simulated searchers, then simulated studies"
                if plan.effect == PowerPlan.Effect.SIMULATED
                else "simulated studies"
            ),
        },
    )


def calibration_rows(plan: PowerPlan) -> list[dict]:
    """The calibration report of a simulated plan: each behaviour figure of the real and the simulated
    sessions."""
    report = (plan.sample or {}).get("calibration")
    if not report:
        return []
    rows = []
    labels = {**BEHAVIOUR, "agreement": "judgments equal to the reference grade (share)"}
    for name, label in labels.items():
        real, simulated = report["real"].get(name) or {}, report["simulated"].get(name) or {}
        difference = None
        if real.get("mean") is not None and simulated.get("mean") is not None:
            difference = simulated["mean"] - real["mean"]
        rows.append({"label": label, "real": real, "simulated": simulated, "difference": difference})
    return rows


@researcher_required
def plan_status(request, slug, plan_id):
    plan = _plan_for(request, slug, plan_id)
    return JsonResponse(
        {
            "status": plan.status,
            "done": plan.progress_done,
            "total": plan.progress_total,
            "error": plan.error,
            "finished": plan.is_finished,
        }
    )


@researcher_required
def plan_chart(request, slug, plan_id):
    payload = _Curve(_plan_for(request, slug, plan_id)).payload
    return JsonResponse(
        {"figure": payload["figure"], "notes": payload["notes"], "complete": payload["complete"]}
    )


@researcher_required
def plan_csv(request, slug, plan_id):
    plan = _plan_for(request, slug, plan_id)
    payload = _Curve(plan).payload
    buffer = io.StringIO()
    csv.writer(buffer).writerows(
        safe_rows([payload["header"], *payload["rows"]], raw=request.GET.get("raw") == "1")
    )
    response = HttpResponse(buffer.getvalue(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{plan.study.slug}-power-plan{plan.pk}.csv"'
    return response
