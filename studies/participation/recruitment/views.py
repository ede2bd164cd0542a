"""The researcher's recruitment pages (docs/recruitment.md): the public link and its panel, the completion
codes, the study-level time limit, closing a cell (the study's own status, which the public link follows, is
the study page's: design/lifecycle_views.py); the import of the panel's export and the
reconciliation of its states with ours. Thin: an access-checked fetch, a form, a service, a redirect."""

from __future__ import annotations

import json
from collections import Counter

from django import forms
from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from sessionlab.plurals import counted
from studies.accounts.access import panel_ids_visible_to, researcher_required, study_for_researcher
from studies.design.rows import row_counts
from studies.design.views import lifecycle_context
from studies.errors import RecruitmentError
from studies.kernel.gold import gold_on
from studies.models import CODE_MODES, EFFORT_OUTCOMES
from studies.participation.recruitment import panel_reconciliation
from studies.participation.recruitment.check_outcomes import check_outcomes, gold_pairs_of
from studies.participation.recruitment.codes import completion_pool_add, pool_counts, typed_codes_match
from studies.participation.recruitment.effort import preset_of
from studies.participation.recruitment.panel_reconciliation import (
    flagged_participants,
    reconciliation_explained,
)
from studies.participation.recruitment.panel_status import MAX_IMPORT_BYTES, panel_export_import
from studies.participation.recruitment.panels import (
    MAX_STUDY_LIMIT_MINUTES,
    PANELS,
    recruitment_of,
    recruitment_update,
)
from studies.participation.recruitment.sweep import scheduler_last_run

MAX_EXPORT_BYTES = MAX_IMPORT_BYTES
EFFORT_AND_CODE_FIELDS = (
    "effort_min_queries",
    "effort_min_judgments",
    "effort_min_active_seconds",
    "effort_outcome",
    "code_mode",
)


class RecruitmentForm(forms.Form):
    panel = forms.ChoiceField(choices=[(k, p.name) for k, p in PANELS.items()])
    completion_url = forms.CharField(
        max_length=500,
        required=False,
        help_text="Blank: the panel's own (Prolific's). {code} is replaced by the code.",
    )
    code_completed = forms.CharField(max_length=40)
    code_screened_out = forms.CharField(max_length=40)
    code_failed_checks = forms.CharField(max_length=40)
    time_limit_minutes = forms.IntegerField(
        min_value=1,
        max_value=MAX_STUDY_LIMIT_MINUTES,
        required=False,
        label="Study time limit (minutes)",
        help_text="From the first act (consent) or the arrival; past it a participant is timed out "
        "and their row goes to the next arrival.",
    )
    closed_cells = forms.CharField(
        required=False, help_text="Cells closed to new arrivals, e.g. “S1:A, S3:B”."
    )

    checks_preset = forms.ChoiceField(
        choices=[
            (
                "prolific",
                "Prolific's policy: two attention failures before a rejection, "
                "comprehension with a second chance",
            ),
            ("strict", "Strict: one failure screens out"),
        ],
        label="Checks preset",
        required=False,
    )
    checks_items = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        label="Checks",
        help_text='JSON list: [{"name": "attention_1", "kind": "attention", "label": "To show you read this, '
        'choose Blue.", "choices": ["Red", "Blue"], "answer": "Blue"}]; shown before the first scenario.',
    )

    checks_gold = forms.BooleanField(
        required=False,
        label="Gold documents inside each scenario",
        help_text="After each search, the participant judges two documents of the task's topic from the "
        "newest reference version: one at its top grade, one judged 0. Judging the relevant one 0 or the "
        "off-topic one relevant counts as a failed attention check.",
    )

    effort_preset = forms.ChoiceField(
        choices=[
            ("custom", "Custom: the numbers below"),
            ("none", "None: no minimum (the default)"),
            ("light", "Light: 1 query and 30 s per task"),
            ("standard", "Standard: 1 query, 1 judgment and 60 s per task"),
            ("strict", "Strict: 2 queries, 3 judgments and 120 s per task"),
        ],
        label="Minimum effort per task",
        required=False,
        help_text="A preset fills the three numbers below. Checked when a participant completes, "
        "from what the server stored.",
    )
    effort_min_queries = forms.IntegerField(
        min_value=0, max_value=100, required=False, label="Minimum queries per task"
    )
    effort_min_judgments = forms.IntegerField(
        min_value=0, max_value=1000, required=False, label="Minimum judgments per task"
    )
    effort_min_active_seconds = forms.IntegerField(
        min_value=0,
        max_value=24 * 3600,
        required=False,
        label="Minimum active seconds per task",
        help_text="For now the session's start to its end on its corrected timeline.",
    )
    effort_outcome = forms.ChoiceField(choices=EFFORT_OUTCOMES, label="Below the minimum", required=False)
    code_mode = forms.ChoiceField(
        choices=CODE_MODES,
        required=False,
        label="Completed code",
        help_text="Per participant or a pool: for panels where the worker types the code (MTurk, SONA); "
        "Prolific checks one code per study.",
    )
    code_pool = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Add codes to the pool",
        help_text="One a line (or a CSV whose first column is the code); each is handed out once.",
    )

    def clean_checks_items(self):
        raw = self.cleaned_data["checks_items"].strip()
        if not raw:
            return []
        try:
            return json.loads(raw)
        except ValueError as error:
            raise forms.ValidationError(f"not JSON: {error}") from None
        except RecursionError:
            raise forms.ValidationError("not JSON we can read: nested too deeply") from None

    def clean_closed_cells(self):
        cells = []
        for part in self.cleaned_data["closed_cells"].replace(";", ",").split(","):
            if part.strip():
                scenario, _, system = part.strip().partition(":")
                if not system:
                    raise forms.ValidationError(f"{part.strip()!r}: write a cell as scenario:system")
                cells.append([scenario.strip(), system.strip()])
        return cells


def _initial(found) -> dict:
    return {
        "panel": found.panel,
        "completion_url": found.completion_url,
        "code_completed": found.code_completed,
        "code_screened_out": found.code_screened_out,
        "code_failed_checks": found.code_failed_checks,
        "time_limit_minutes": found.time_limit_minutes,
        "closed_cells": ", ".join(f"{c}:{y}" for c, y in found.closed_cells or []),
        "checks_preset": (found.checks or {}).get("preset", "prolific"),
        "checks_items": json.dumps((found.checks or {}).get("items", []), indent=1)
        if (found.checks or {}).get("items")
        else "",
        "checks_gold": gold_on(found.checks),
        "effort_preset": "custom",
        "effort_min_queries": found.effort_min_queries,
        "effort_min_judgments": found.effort_min_judgments,
        "effort_min_active_seconds": found.effort_min_active_seconds,
        "effort_outcome": found.effort_outcome,
        "code_mode": found.code_mode,
    }


def _link_templates(request, found) -> list[tuple[str, str]]:
    base = request.build_absolute_uri(reverse("panel:join", kwargs={"public_token": found.public_token}))
    return [
        (
            "Prolific",
            f"{base}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
            f"&SESSION_ID={{{{%SESSION_ID%}}}}",
        ),
        ("MTurk (external question URL; MTurk adds workerId, assignmentId, hitId)", base),
        ("Generic pool (SONA, a mailing list)", f"{base}?pid=<participant id>"),
    ]


@researcher_required
def recruitment_settings(request, slug):
    study = study_for_researcher(request, slug)
    found = recruitment_of(study)
    form = RecruitmentForm(request.POST or None, initial=_initial(found))
    if request.method == "POST":
        if form.is_valid():
            data = dict(form.cleaned_data)
            preset, items = data.pop("checks_preset") or "prolific", data.pop("checks_items")
            with_gold = data.pop("checks_gold")
            data["checks"] = {"preset": preset, "items": items} if items or with_gold else {}
            if with_gold:
                data["checks"]["gold"] = True
            data["effort_preset"] = data["effort_preset"] or "custom"
            for name in EFFORT_AND_CODE_FIELDS:  # left out of the form: unchanged
                if data.get(name) in (None, ""):
                    data.pop(name, None)
            pool = data.pop("code_pool").strip()
            try:
                with transaction.atomic():
                    recruitment_update(study=study, **data)
                    added = completion_pool_add(study=study, text=pool) if pool else 0
            except RecruitmentError as error:
                for message in error.errors:
                    messages.error(request, message)
            else:
                messages.success(
                    request,
                    "Recruitment settings saved."
                    + (f" {counted(added, 'code')} added to the pool." if added else ""),
                )
                return redirect("recruitment:settings", slug=study.slug)
        else:
            for field, errors in form.errors.items():
                messages.error(request, f"{field}: {' '.join(errors)}")
    counts = row_counts(study=study, recruitment=found)
    ran_at, recent = scheduler_last_run()
    context = {
        "scheduler_ran_at": ran_at,
        "scheduler_recent": recent,
        "sweep_seconds": settings.OVERDUE_SWEEP_SECONDS,
        "study": study,
        "recruitment": found,
        "form": form,
        "links": _link_templates(request, found),
        "status_url": request.build_absolute_uri(
            reverse("panel:status", kwargs={"public_token": found.public_token})
        ),
        # Not "counts": the status control's study counts (lifecycle_context) go by that name.
        "rows": counts,
        "open_freed": len(counts.open_freed),
        "gold_on": gold_on(found.checks),
        "gold_pairs": gold_pairs_of(study=study),
        "outcomes": check_outcomes(study=study),
        "pool": pool_counts(study),
        "effort_preset": preset_of(found),
        "panel_ids_given": panel_ids_visible_to(user=request.user, study=study),
        **lifecycle_context(study),  # the study's status, the one switch of its public link too
    }
    return render(request, "studies/recruitment.html", context)


def _reconciliation_page(request, study, typed=None):
    context = {
        "study": study,
        "rows": panel_reconciliation.reconciliation(study=study),
        "explained": reconciliation_explained(study=study),
        "flagged": flagged_participants(study=study),
        "typed": typed,
        "typed_counts": sorted(Counter(row.match for row in typed or []).items()),
    }
    return render(request, "studies/reconciliation.html", context)


@researcher_required
def reconciliation_page(request, slug):
    return _reconciliation_page(request, study_for_researcher(request, slug))


@researcher_required
@require_POST
def typed_codes(request, slug):
    """The panel's typed codes (a CSV of worker id and code, uploaded or pasted), each matched; nothing is
    stored, so a refused upload changes nothing."""
    study = study_for_researcher(request, slug)
    upload = request.FILES.get("codes")
    if upload is not None and upload.size > MAX_EXPORT_BYTES:
        messages.error(
            request, f"The file is larger than {MAX_EXPORT_BYTES // 1_000_000} MB; nothing matched."
        )
        return redirect("recruitment:reconciliation", slug=study.slug)
    try:
        text = upload.read().decode("utf-8-sig") if upload is not None else request.POST.get("codes_text", "")
    except UnicodeDecodeError as error:
        messages.error(request, f"Nothing matched: the file is not UTF-8 (byte {error.start + 1}).")
        return redirect("recruitment:reconciliation", slug=study.slug)
    try:
        typed = typed_codes_match(study=study, text=text)
    except RecruitmentError as error:
        messages.error(request, "Nothing matched.")
        for message in error.errors[:50]:
            messages.error(request, message)
        return redirect("recruitment:reconciliation", slug=study.slug)
    return _reconciliation_page(request, study, typed)


@researcher_required
@require_POST
def export_import(request, slug):
    study = study_for_researcher(request, slug)
    upload = request.FILES.get("export")
    if upload is None:
        messages.error(request, "Choose the panel's submissions export (CSV) first.")
    elif upload.size > MAX_EXPORT_BYTES:
        messages.error(
            request, f"The file is larger than {MAX_EXPORT_BYTES // 1_000_000} MB; nothing imported."
        )
    else:
        raw = upload.read()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            messages.error(request, f"Nothing imported: the file is not UTF-8 (byte {error.start + 1}).")
        else:
            try:
                result = panel_export_import(study=study, text=text)
            except RecruitmentError as error:
                messages.error(request, "Nothing imported.")
                for message in error.errors[:50]:
                    messages.error(request, message)
            else:
                messages.success(
                    request,
                    f"Imported {result.rows} rows: {result.applied} applied, "
                    f"{result.replayed} already imported.",
                )
    return redirect("recruitment:reconciliation", slug=study.slug)
