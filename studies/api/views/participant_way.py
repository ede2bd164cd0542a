"""The participant's whole way through the API (docs/api.md, "The whole way"): the current step with what a
front-end needs to show it, and one endpoint per action, each calling the service the link's pages call.

Every action answers 200 {"ok": true, "step": the step after it}; a re-sent action (the same client event id)
is stored once and answered the same way. Answers a question does not take are a 400 naming the question
(`{"answers": {"age": ["..."]}}`), a refusal of the way (out of order, already answered, paused) a 409 with
the reason, never a 5xx.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studies.api import serializers as s
from studies.api.views.common import conflict
from studies.api.views.participant_api import ParticipantScoped
from studies.design import selectors
from studies.errors import InvalidAnswers, InvalidEvent, Refused
from studies.kernel.gold import gold_order
from studies.kernel.steps import StepKind
from studies.models import Assignment, Participant, SearchSession
from studies.participation.events import rules
from studies.participation.way import gold
from studies.participation.way.check_answers import check_answer_record
from studies.participation.way.form_steps import (
    consent_decline,
    consent_record,
    post_task_save,
    pre_task_save,
    questionnaire_items,
    questionnaire_save,
)
from studies.participation.way.steps import participant_withdraw
from studies.participation.way.where import Where, check_shown, participant_where

_QUESTIONS = {
    StepKind.QUESTIONNAIRE: {},
    StepKind.PRE_TASK: {"pre_task": True},
    StepKind.POST_TASK: {"post_task": True},
}


def _item(item: dict) -> dict:
    """A question with every key (null or empty where it has none), as its schema says."""
    return {
        "name": item["name"],
        "label": item["label"],
        "kind": item.get("kind", "text"),
        "min": item.get("min"),
        "max": item.get("max"),
        "choices": [str(c) for c in item.get("choices", [])],
        "required": item.get("required", True),
        "min_label": item.get("min_label", ""),
        "max_label": item.get("max_label", ""),
        "other": item.get("other") is True,
        "new_page": item.get("new_page") is True,
    }


def step_data(participant: Participant) -> dict:
    """The participant's current step (studies/participation/way/where.py) as ParticipantStepSerializer shows
    it."""
    where: Where = participant_where(participant=participant)
    step = where.step
    study = participant.study
    assignment = step.assignment if step else None
    session = step.session if step else None
    deadline = None
    if where.kind == StepKind.SEARCH:
        assert session is not None  # a search step has its session (studies.kernel.steps.participant_step)
        deadline = rules.session_deadline(session)
    data: dict[str, Any] = {
        "kind": where.kind,
        "message": where.message,
        "assignment": assignment.position if assignment else None,
        "total": step.total if step else 0,
        "session": session.pk if session else None,
        "task": assignment.scenario if assignment else None,
        "system_kind": assignment.system.backend if assignment else None,
        "deadline": deadline,
        "consent": {"text": study.consent_text, "version": study.consent_version}
        if where.kind == StepKind.CONSENT
        else None,
        "items": [],
        "check": None,
        "retry": where.retry,
        "gold": None,
        "completion": None,
    }
    if where.kind in _QUESTIONS:
        data["items"] = [_item(i) for i in questionnaire_items(study=study, **_QUESTIONS[where.kind])]
    if where.kind == StepKind.CHECKS:
        assert where.check is not None  # participant_where gives the "checks" step its check
        data["check"] = check_shown(where.check)
    if where.kind == StepKind.GOLD:
        # In this participant's order, never saying which one is the relevant document.
        assert step is not None and assignment is not None and step.gold is not None  # the gold step has both
        documents = gold_order(participant=participant, scenario_id=assignment.scenario_id, pair=step.gold)
        data["gold"] = {
            "documents": [{"doc": d.external_id, "title": d.title, "text": d.text} for d in documents],
            "grade_levels": selectors.grade_levels(study=study),
        }
    if where.completion is not None:
        c = where.completion
        data["completion"] = {
            "kind": c.kind,
            "code": c.code,
            "redirect_url": c.redirect_url,
            "message": c.message,
        }
    return data


def _fresh(participant: Participant) -> Participant:
    return Participant.objects.select_related("study").get(pk=participant.pk)


class ParticipantAction(ParticipantScoped, APIView):
    """An action of the way: validate the body, call the service, answer the step after it."""

    request_serializer: type[s.ParticipantActionSerializer]
    answers_field = "answers"  # where a service's InvalidAnswers goes in the 400

    def act(self, participant: Participant, data: dict, common: dict) -> None:
        raise NotImplementedError

    def post(self, request):
        body = self.request_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        common = {
            "client_event_id": data["client_event_id"],
            "client_time": data.get("time"),
            "sequence": data.get("seq"),
        }
        try:
            self.act(self.participant, data, common)
        except InvalidAnswers as invalid:  # before Refused: it is one
            raise ValidationError(
                {self.answers_field: {name: [message] for name, message in invalid.errors.items()}}
            ) from None
        except InvalidEvent as error:
            raise ValidationError({"client_event_id": [str(error)]}) from None
        except Refused as refusal:
            return conflict(refusal.message)
        return Response(
            s.StepAnswerSerializer({"ok": True, "step": step_data(_fresh(self.participant))}).data
        )


def _action_schema(serializer) -> Callable:
    return extend_schema_view(post=extend_schema(request=serializer, responses={200: s.StepAnswerSerializer}))


def _own_session(participant: Participant, session_id: int) -> SearchSession:
    # Another participant's session reads as one that does not exist.
    session = (
        SearchSession.objects.select_related("assignment__participant__study", "assignment__scenario")
        .filter(pk=session_id, assignment__participant=participant)
        .first()
    )
    if session is None:
        raise ValidationError({"session": ["not one of your search sessions"]})
    return session


class ParticipantStepView(ParticipantScoped, APIView):
    """The participant's current step, with what is needed to show it: the consent text, the questions, the
    next check (never its answer), the task, the session, the two gold documents (never which is which)."""

    @extend_schema(responses=s.ParticipantStepSerializer)
    def get(self, request):
        return Response(s.ParticipantStepSerializer(step_data(self.participant)).data)


@_action_schema(s.ConsentSerializer)
class ParticipantConsent(ParticipantAction):
    """Agree to the consent text of `consent_version` (the version shown), or decline (nothing more is
    kept)."""

    request_serializer = s.ConsentSerializer

    def act(self, participant, data, common):
        if data["decision"] == "agree":
            consent_record(participant=participant, consent_version=data["consent_version"], **common)
        else:
            consent_decline(participant=participant, **common)


@_action_schema(s.QuestionnaireAnswersSerializer)
class ParticipantQuestionnaire(ParticipantAction):
    """The pre-study questionnaire's answers (once)."""

    request_serializer = s.QuestionnaireAnswersSerializer

    def act(self, participant, data, common):
        questionnaire_save(participant=participant, answers=data["answers"], **common)


@_action_schema(s.PreTaskAnswersSerializer)
class ParticipantPreTask(ParticipantAction):
    """The answers to the study's questions before the task at `assignment`, before its session starts."""

    request_serializer = s.PreTaskAnswersSerializer

    def act(self, participant, data, common):
        assignment = Assignment.objects.filter(participant=participant, position=data["assignment"]).first()
        if assignment is None:
            raise ValidationError({"assignment": ["no assignment at this position"]})
        pre_task_save(participant=participant, assignment=assignment, answers=data["answers"], **common)


@_action_schema(s.CheckAnswerSerializer)
class ParticipantCheck(ParticipantAction):
    """One answer to the study's next attention or comprehension check."""

    request_serializer = s.CheckAnswerSerializer

    def act(self, participant, data, common):
        check_answer_record(participant=participant, name=data["check"], answer=data["answer"], **common)


@_action_schema(s.GoldGradesSerializer)
class ParticipantGold(ParticipantAction):
    """The grades of the task's two gold documents, after its search and before its post-task questions."""

    request_serializer = s.GoldGradesSerializer
    answers_field = "grades"

    def act(self, participant, data, common):
        session = _own_session(participant, data["session"])
        gold.gold_answer_record(participant=participant, session=session, grades=data["grades"], **common)


@_action_schema(s.PostTaskAnswersSerializer)
class ParticipantPostTask(ParticipantAction):
    """The post-task questions' answers, once the task's search (and its gold documents) are done."""

    request_serializer = s.PostTaskAnswersSerializer

    def act(self, participant, data, common):
        session = _own_session(participant, data["session"])
        post_task_save(participant=participant, session=session, answers=data["answers"], **common)


@_action_schema(s.WithdrawSerializer)
class ParticipantWithdrawSelf(ParticipantAction):
    """The participant withdraws: their data is deleted, an audit entry stays
    (participation.participant_withdraw)."""

    request_serializer = s.WithdrawSerializer

    def act(self, participant, data, common):
        rules.client_id_check(common["client_event_id"])
        participant_withdraw(participant=participant)
