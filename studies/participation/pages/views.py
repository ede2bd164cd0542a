"""The participant's pages (no account: the private link's token is the only key).

Thin views: fetch the participant by token (404 for anything else), call a service, redirect to the current
step or answer JSON. Every page is the start of a step, so reopening the link resumes where they were.
"""

from __future__ import annotations

import functools
import json
import logging
import uuid

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods, require_POST

from sessionlab.csp import policy_for
from studies.design import selectors
from studies.errors import InvalidAnswers, InvalidEvent, Refused
from studies.kernel import steps as kernel_steps
from studies.kernel import tokens
from studies.kernel.gold import gold_order
from studies.kernel.states import state_of
from studies.kernel.steps import StepKind
from studies.models import Assignment, SearchSession, System
from studies.participation.events import clock, rules
from studies.participation.recruitment.completion import completion_of, last_stored_sequence
from studies.participation.recruitment.resume import resume_code_of
from studies.participation.way import form_steps, gold, reload, steps
from studies.participation.way.answer_turns import session_turns
from studies.participation.way.check_answers import check_answer_record
from studies.participation.way.question_drafts import (
    draft_forget,
    draft_keep,
    draft_key,
    draft_page,
    drafts_forget,
)
from studies.participation.way.where import check_shown, participant_where
from studies.questionnaires.pages import first_page_with, page_next, question_page

logger = logging.getLogger(__name__)


def _participant_or_404(token: str):
    participant = tokens.participant_by_token(token)
    if participant is None:
        raise Http404("No such study link.")
    return participant


def _sequence(request) -> int | None:
    raw = request.POST.get("sequence", "")
    return (
        int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 10 else None
    )  # the service checks the range


def _pk(raw: str) -> int | None:
    """A primary key sent in a form: ASCII digits a bigint holds ("²" passed isdigit() and then failed int(),
    30 digits failed SQLite's comparison: both were a 500)."""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 18 else None


def _common(request) -> dict:
    client_event_id = request.POST.get("client_event_id", "")
    if not client_event_id:
        client_event_id = (
            uuid.uuid4().hex
        )  # a form sent without its id (should not happen): still logged once
    return {
        "client_event_id": client_event_id,
        "sequence": _sequence(request),
        "client_time": request.POST.get("client_time") or None,
    }


def _bad_event(invalid: InvalidEvent):
    """A form whose client event id the log cannot hold (only a tampered page sends one): a 400 saying why."""
    return HttpResponseBadRequest(f"This form cannot be saved: {invalid.message}.", content_type="text/plain")


def _home(participant):
    return redirect("participate:home", token=participant.access_token)


def _refused(request, participant, refusal: Refused, status: int = 409):
    return render(
        request,
        "participate/refused.html",
        {"participant": participant, "study": participant.study, "message": refusal.message},
        status=status,
    )


def _context(participant, step, **extra) -> dict:
    token = participant.access_token
    study = participant.study
    client = {
        "token": token,
        "eventsUrl": reverse("participate:events", kwargs={"token": token}),
        "homeUrl": reverse("participate:home", kwargs={"token": token}),
    }
    if step is not None and getattr(step, "kind", "") == StepKind.WITHDRAWN:
        client["withdrawn"] = True  # the page deletes what the browser kept of them (participant.js)
    return {
        "participant": participant,
        "study": study,
        "step": step,
        "client_event_id": uuid.uuid4().hex,
        "client": client,
        # Came by the public link: the code that resumes there in another browser (recruitment/resume.py).
        "resume_code": resume_code_of(participant)
        if participant.panel_id and participant.preview_at is None and participant.withdrawn_at is None
        else None,
        **extra,
    }


# The question pages: a step's kind -> its template, and which of the study's questionnaires it asks.
_QUESTION_PAGES = {
    StepKind.QUESTIONNAIRE: ("participate/questionnaire.html", {}),
    StepKind.PRE_TASK: ("participate/pre_task.html", {"pre_task": True}),
    StepKind.POST_TASK: ("participate/post_task.html", {"post_task": True}),
}


@never_cache
@ensure_csrf_cookie
@require_http_methods(["GET", "HEAD"])
def participant_home(request, token):
    participant = _participant_or_404(token)
    # The visit (study clock, time limit, state), the step, a pause and the checks:
    # participation/way/where.py.
    where = participant_where(participant=participant)
    step = where.step
    if where.kind == StepKind.ENDED:
        return _completion_policy(
            request,
            where.completion,
            render(
                request,
                "participate/ended.html",
                _context(participant, None, message=where.message, completion=where.completion),
            ),
        )
    if where.kind == StepKind.PAUSED:
        return render(
            request,
            "participate/paused.html",
            _context(participant, step, message=where.message, status=where.status),
        )
    if where.kind == StepKind.CHECKS:
        return render(
            request,
            "participate/checks.html",
            _context(participant, step, check=check_shown(where.check), retry=where.retry),
        )
    if step.kind == StepKind.CONSENT:
        return render(request, "participate/consent.html", _context(participant, step))
    if step.kind in _QUESTION_PAGES:
        template, which = _QUESTION_PAGES[step.kind]
        items = form_steps.questionnaire_items(study=participant.study, **which)
        page = draft_page(request.session, draft_key(participant, step), items) or question_page(
            items, {}, {}, 1
        )
        return render(request, template, _context(participant, step, page=page))
    if step.kind == StepKind.SCENARIO:
        return render(request, "participate/scenario.html", _context(participant, step))
    if step.kind == StepKind.SEARCH:
        return _search_page(request, participant, step)
    if step.kind == StepKind.GOLD:
        return _gold_page(request, participant, step)
    return _completion_policy(
        request,
        where.completion,
        render(
            request, f"participate/{step.kind}.html", _context(participant, step, completion=where.completion)
        ),
    )


def _search_page(request, participant, step):
    """The search page of the step's session, with its deadline and grades for the page's script."""
    context = _context(participant, step, grades=selectors.grade_levels(study=participant.study))
    deadline = rules.session_deadline(step.session)
    context["client"].update(
        {
            "session": step.session.pk,
            "deadline": deadline.isoformat() if deadline else None,
            "grades": [{"value": g.value, "label": g.label} for g in context["grades"]],
            "pageSize": 10,
            "serverNow": timezone.now().isoformat(),
            # What the page records beyond actions (exposure.js, attention.js).
            "exposure": participant.study.record_exposure,
            "attention": participant.study.record_attention,
            "sessionStarted": step.session.started_at.isoformat(),
            "idleMs": settings.ATTENTION_IDLE_SECONDS * 1000,
        }
    )
    # A generative system answers in a conversation (answers.js) instead of a list.
    context["generative"] = step.assignment.system.backend == System.Backend.GENERATIVE
    if context["generative"]:
        token = participant.access_token
        context["client"]["answerUrl"] = reverse("participate:answer", kwargs={"token": token})
        context["client"]["turns"] = session_turns(session=step.session)
    # Opened again (a reload, another device): the last list shown and the grades come back, no query is
    # logged, and the reload is (by the server, so nothing on the page can lose it).
    restored = reload.search_state(session=step.session)
    if restored is not None and request.method == "GET":
        reload.page_reload_record(
            session=step.session, state=restored, user_agent=request.META.get("HTTP_USER_AGENT", "")
        )
    context["restored"] = restored
    context["client"]["restored"] = None if context["generative"] else restored
    return render(request, "participate/search.html", context)


def _completion_policy(request, completion, response):
    """The last page of an MTurk participant posts the HIT to MTurk's externalSubmit (completion.js): its
    Content-Security-Policy allows that one form target, on this response only (sessionlab/csp.py)."""
    if completion is not None and completion.submit_url:
        origin = completion.submit_url.removesuffix("/mturk/externalSubmit")
        response["Content-Security-Policy"] = policy_for(request.path, form_action=f"'self' {origin}")
    return response


def _gold_page(request, participant, step, errors=None, chosen=None, status=200):
    """The scenario's two gold documents (studies/kernel/gold.py), in this participant's order, never saying
    which is which, with the study's grade buttons."""
    documents = gold_order(participant=participant, scenario_id=step.assignment.scenario_id, pair=step.gold)
    grades = selectors.grade_levels(study=participant.study)
    chosen, errors = chosen or {}, errors or {}
    rows = [
        {
            "number": n,
            "doc": d.external_id,
            "title": d.title,
            "text": d.text,
            "error": errors.get(d.external_id, ""),
            "chosen": str(chosen.get(f"grade-{d.external_id}", "")),
        }
        for n, d in enumerate(documents, start=1)
    ]
    return render(
        request,
        "participate/gold.html",
        _context(participant, step, documents=rows, grades=grades),
        status=status,
    )


@require_POST
def gold_submit(request, token):
    """The participant's grades of the scenario's two gold documents (gold.gold_answer_record)."""
    participant = _participant_or_404(token)
    session_id = _pk(request.POST.get("session", ""))
    if session_id is None:
        return HttpResponseBadRequest("Which search?")
    # Another participant's session is a 404, the same answer as one that does not exist.
    session = (
        SearchSession.objects.select_related("assignment__participant__study", "assignment__scenario")
        .filter(pk=session_id, assignment__participant=participant)
        .first()
    )
    if session is None:
        raise Http404("Not one of your searches.")
    grades = {key[len("grade-") :]: value for key, value in request.POST.items() if key.startswith("grade-")}
    try:
        gold.gold_answer_record(participant=participant, session=session, grades=grades, **_common(request))
    except InvalidAnswers as invalid:
        step = kernel_steps.participant_step(participant=participant)
        if step.kind != StepKind.GOLD:
            return _home(participant)
        return _gold_page(request, participant, step, errors=invalid.errors, chosen=request.POST, status=400)
    except InvalidEvent as invalid:
        return _bad_event(invalid)
    except Refused as refusal:
        return _refused(request, participant, refusal)
    return _home(participant)


@never_cache
@require_http_methods(["GET", "HEAD"])
def completion_status(request, token):
    """What the last page asks before it shows the completion code and sends the participant to the panel:
    their state, the code, the panel's URL, and the highest event sequence number stored (the page waits
    until it has reached its own)."""
    participant = _participant_or_404(token)
    completion = completion_of(participant)
    return JsonResponse(
        {
            "state": state_of(participant),
            "last_sequence": last_stored_sequence(participant),
            "completion": None
            if completion is None
            else {
                "kind": completion.kind,
                "code": completion.code,
                "redirect_url": completion.redirect_url,
                "message": completion.message,
                # MTurk: the page posts these fields to this address (a form), instead of a redirect.
                "submit": {"action": completion.submit_url, "fields": completion.submit_fields}
                if completion.submit_url
                else None,
            },
        }
    )


@require_POST
def check_submit(request, token):
    """One answer to an attention or comprehension check of the study (recruitment.check_answer_record)."""
    participant = _participant_or_404(token)
    try:
        check_answer_record(
            participant=participant,
            name=request.POST.get("check", ""),
            answer=request.POST.get("answer", ""),
            **_common(request),
        )
    except InvalidEvent as invalid:
        return _bad_event(invalid)
    except Refused as refusal:
        return _refused(request, participant, refusal)
    return _home(participant)


@require_POST
def consent_submit(request, token):
    participant = _participant_or_404(token)
    decision = request.POST.get("decision")
    try:
        if decision == "accept":
            form_steps.consent_record(
                participant=participant,
                consent_version=request.POST.get("consent_version", ""),
                **_common(request),
            )
        elif decision == "decline":
            form_steps.consent_decline(participant=participant, **_common(request))
        else:
            messages.error(request, "Please choose whether you agree to take part.")
    except InvalidEvent as invalid:
        return _bad_event(invalid)
    except Refused as refusal:
        messages.error(request, refusal.message)
    return _home(participant)


@require_POST
def questionnaire_submit(request, token):
    participant = _participant_or_404(token)
    return _answers_submit(request, participant, form_steps.questionnaire_save, StepKind.QUESTIONNAIRE)


def _own_assignment(request, participant):
    """The participant's assignment the form names (None when it names none). Another participant's is a 404,
    the same answer as one that does not exist: ids say nothing."""
    assignment_id = _pk(request.POST.get("assignment", ""))
    if assignment_id is None:
        return None
    assignment = Assignment.objects.filter(pk=assignment_id, participant=participant).first()
    if assignment is None:
        raise Http404("Not one of your scenarios.")
    return assignment


@require_POST
def session_start_submit(request, token):
    participant = _participant_or_404(token)
    assignment = _own_assignment(request, participant)
    if assignment is None:
        return HttpResponseBadRequest("Which scenario?")
    try:
        form_steps.session_start(participant=participant, assignment=assignment, **_common(request))
    except InvalidEvent as invalid:
        return _bad_event(invalid)
    except Refused as refusal:
        return _refused(request, participant, refusal)
    return _home(participant)


@require_POST
def pre_task_submit(request, token):
    """The study's questions before a task, answered before its session starts (once per assignment)."""
    participant = _participant_or_404(token)
    assignment = _own_assignment(request, participant)
    if assignment is None:
        return HttpResponseBadRequest("Which scenario?")
    return _answers_submit(
        request,
        participant,
        functools.partial(form_steps.pre_task_save, assignment=assignment),
        StepKind.PRE_TASK,
    )


@require_POST
def post_task_submit(request, token):
    participant = _participant_or_404(token)
    session_id = _pk(request.POST.get("session", ""))
    if session_id is None:
        return HttpResponseBadRequest("Which search?")
    # Another participant's session is a 404, the same answer as one that does not exist.
    session = (
        SearchSession.objects.select_related("assignment__participant__study")
        .filter(pk=session_id, assignment__participant=participant)
        .first()
    )
    if session is None:
        raise Http404("Not one of your searches.")
    return _answers_submit(
        request,
        participant,
        functools.partial(form_steps.post_task_save, session=session),
        StepKind.POST_TASK,
    )


def _answers_submit(request, participant, save, which: StepKind):
    """Save a questionnaire's answers with `save` (a service taking the form's answers): wrong answers show
    the `which` page (questionnaire, pre_task or post_task) again with a message per question. A page before
    the last one is checked and the next shown, nothing stored (studies/questionnaires/pages.py)."""
    items = form_steps.questionnaire_items(
        study=participant.study, pre_task=which == StepKind.PRE_TASK, post_task=which == StepKind.POST_TASK
    )
    step = kernel_steps.participant_step(participant=participant)
    key = draft_key(participant, step)
    try:
        shown = page_next(items, request.POST)
        if shown is not None and step.kind != which:
            return _home(participant)  # a page of questions already answered (another tab): where they are
        if shown is None:
            save(participant=participant, answers=request.POST, **_common(request))
            draft_forget(request.session, key)
        elif not any(row["error"] for row in shown.items):
            draft_keep(request.session, key, items, request.POST, shown.number)  # a reload shows this page
    except InvalidAnswers as invalid:
        shown = question_page(items, request.POST, invalid.errors, first_page_with(items, invalid.errors))
    except InvalidEvent as invalid:
        return _bad_event(invalid)
    except Refused as refusal:
        return _refused(request, participant, refusal)
    if shown is not None:
        return render(
            request,
            f"participate/{which}.html",
            _context(participant, step, page=shown),
            status=400 if any(row["error"] for row in shown.items) else 200,
        )
    return _home(participant)


@require_POST
def events_submit(request, token):
    """A batch of client events: JSON {"events": [...]} (fetch, CSRF header) or a form field "batch" holding
    that JSON (navigator.sendBeacon, CSRF field), with the batch's "clock" (docs/time-model.md). Answers
    {"acks": [...]}, one ack per event, in order, and the server's "clock" when the batch sent one."""
    received_at = timezone.now()
    participant = tokens.participant_for_events(token)
    if participant is None:
        raise Http404("No such study link.")
    # The CSRF check has already read a form body (the beacon's), so look at the header, not request.body.
    if too_large := steps.body_too_large(request.META.get("CONTENT_LENGTH")):
        return JsonResponse({"error": too_large}, status=413)
    try:
        if request.content_type == "application/json":
            body = json.loads(request.body)
        else:
            body = json.loads(request.POST.get("batch", ""))
    except ValueError as error:  # UnicodeDecodeError included
        return JsonResponse({"error": f"not JSON: {str(error)[:200]}"}, status=400)
    except RecursionError:  # the parser's own limit (about a thousand levels); events are checked at 16
        return JsonResponse({"error": "not JSON we can read: nested too deeply"}, status=400)
    events = body.get("events") if isinstance(body, dict) else None
    if not isinstance(events, list):
        return JsonResponse({"error": 'expected {"events": [...]}'}, status=400)
    if too_many := steps.too_many_events(events):
        return JsonResponse({"error": too_many}, status=413)
    # The batch's send time and the last round trip: the client's clock offset (docs/time-model.md).
    clock_sample, clock_refused = clock.batch_sample(body.get("clock"), received_at=received_at)
    # Each event is checked on its own (participation/events/event_checks.py): one ack per event, whatever it
    # holds.
    acks = steps.events_ingest(participant=participant, events=events, clock_sample=clock_sample)
    if "clock" not in body:
        return JsonResponse({"acks": acks})
    return JsonResponse({"acks": acks, "clock": clock.answer(received_at, timezone.now(), clock_refused)})


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def withdraw(request, token):
    participant = _participant_or_404(token)
    if request.method == "POST":
        steps.participant_withdraw(participant=participant)
        drafts_forget(request.session, participant)
        return _home(participant)
    return render(
        request, "participate/withdraw.html", {"participant": participant, "study": participant.study}
    )
