"""LLM assessors (docs/api.md "LLM assessors"): set one up and change it, start, follow and cancel
its runs, read the requests each run kept. The services are the page's (studies/assessment/llm/): the same
checks, the same audit entries. The API key is write-only: no answer of these views carries it."""

from __future__ import annotations

from django.db import transaction
from django.shortcuts import get_object_or_404
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_variables
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studies.api import serializers as s
from studies.api.views.common import OneOf, StudyScoped, conflict, filter_parameters
from studies.assessment.llm import runs, setup
from studies.errors import AssessmentError, AssessorSettingError
from studies.models import LLMAssessor, LLMRequest, LLMRun

# An error report lists a frame's locals: these hold the key as sent.
hide_locals = method_decorator(sensitive_variables())


def _assessors(study):
    return (
        LLMAssessor.objects.filter(membership__study=study)
        .select_related("membership__user", "created_by")
        .order_by("id")
    )


def _setting_refused(error: AssessorSettingError) -> Response:
    return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)


class LLMAssessorList(StudyScoped, generics.ListAPIView):
    """The study's LLM assessors. POST sets one up: endpoint_url and model_name, the other settings as on
    the page (its defaults when left out). A scale the model's 0-3 cannot map onto is a 409."""

    serializer_class = s.LLMAssessorSerializer

    def get_queryset(self):
        return _assessors(self.study)

    @extend_schema(request=s.LLMAssessorWriteSerializer, responses={201: s.LLMAssessorSerializer})
    @hide_locals
    def post(self, request, study_pk):
        data = s.LLMAssessorWriteSerializer(data=request.data, context={"assessor": None})
        data.is_valid(raise_exception=True)
        settings = dict(data.validated_data)
        settings.pop("clear_api_key")  # nothing to clear yet
        try:
            assessor = setup.llm_assessor_create(study=self.study, created_by=request.user, **settings)
        except AssessorSettingError as error:
            return _setting_refused(error)
        except AssessmentError as error:
            return conflict(str(error))
        assessor = _assessors(self.study).get(pk=assessor.pk)
        return Response(s.LLMAssessorSerializer(assessor).data, status=status.HTTP_201_CREATED)


class LLMAssessorDetail(StudyScoped, generics.RetrieveAPIView):
    """One LLM assessor. PATCH changes what it is sent (the rest stays); an audit entry names the fields
    changed, and "key replaced" or "key cleared", never a key."""

    serializer_class = s.LLMAssessorSerializer

    def get_queryset(self):
        return _assessors(self.study)

    @extend_schema(request=s.LLMAssessorWriteSerializer, responses={200: s.LLMAssessorSerializer})
    @hide_locals
    def patch(self, request, study_pk, pk):
        assessor = self.get_object()
        data = s.LLMAssessorWriteSerializer(data=request.data, partial=True, context={"assessor": assessor})
        data.is_valid(raise_exception=True)
        try:
            setup.llm_assessor_update(assessor=assessor, changed_by=request.user, **data.validated_data)
        except AssessorSettingError as error:
            return _setting_refused(error)
        except AssessmentError as error:
            return conflict(str(error))
        return Response(s.LLMAssessorSerializer(_assessors(self.study).get(pk=assessor.pk)).data)


def _run_context(study) -> dict:
    # The runs name their scenarios by code: one query for the study's codes, not one per run.
    return {"scenario_codes": dict(study.scenarios.values_list("id", "code"))}


class RunsScoped(StudyScoped, generics.GenericAPIView):
    def get_serializer_context(self):
        return {**super().get_serializer_context(), **_run_context(self.study)}


class LLMRunList(RunsScoped, generics.ListAPIView):
    """The assessor's runs, newest first. POST starts one over the pool documents it has not graded, of the
    scenarios named by code (all when none): one run at a time per assessor (409 while one is queued or
    running). The run is queued to a worker; follow it at .../llm-runs/<id>/."""

    serializer_class = s.LLMRunSerializer

    def assessor(self) -> LLMAssessor:
        return get_object_or_404(_assessors(self.study), pk=self.kwargs["assessor_pk"])

    def get_queryset(self):
        return self.assessor().runs.select_related("created_by").order_by("-created_at", "-id")

    @extend_schema(request=s.LLMRunStartSerializer, responses={201: s.LLMRunSerializer})
    def post(self, request, study_pk, assessor_pk):
        assessor = self.assessor()
        data = s.LLMRunStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        codes = data.validated_data["scenarios"]
        scenarios = list(self.study.scenarios.filter(code__in=codes).order_by("id"))
        unknown = sorted(set(codes) - {scenario.code for scenario in scenarios})
        if unknown:
            raise ValidationError({"scenarios": f"{unknown[0][:40]!r} is not a scenario code of this study"})
        practice = [scenario.code for scenario in scenarios if scenario.practice]
        if practice:
            raise ValidationError(
                {"scenarios": f"{practice[0]!r} is a practice task: never scored, so never sent to the model"}
            )
        try:
            run = runs.llm_run_start(assessor=assessor, created_by=request.user, scenarios=scenarios)
        except AssessmentError as error:
            return conflict(str(error))
        run = LLMRun.objects.select_related("created_by").get(pk=run.pk)
        return Response(self.get_serializer(run).data, status=status.HTTP_201_CREATED)


def _runs(study):
    return LLMRun.objects.filter(assessor__membership__study=study).select_related(
        "created_by", "assessor__membership__user"
    )


class LLMRunDetail(RunsScoped, generics.RetrieveAPIView):
    """A run: status, progress, tokens, cost, and the error that stopped it, if any."""

    serializer_class = s.LLMRunSerializer

    def get_queryset(self):
        return _runs(self.study)


class LLMRunCancel(StudyScoped, APIView):
    """Cancel a queued or running run before its next request (the one under way is kept); 409 when it had
    already ended."""

    @extend_schema(request=None, responses={200: s.LLMRunSerializer})
    def post(self, request, study_pk, pk):
        run = get_object_or_404(_runs(self.study), pk=pk)
        with transaction.atomic():
            cancelled = runs.llm_run_cancel(run=run, by=request.user)
        if not cancelled:
            return conflict(f"run {run.pk} had already ended ({run.get_status_display().lower()})")
        run.refresh_from_db()
        return Response(s.LLMRunSerializer(run, context=_run_context(self.study)).data)


REQUEST_FILTERS = {
    "status": ("status", OneOf(LLMRequest.Status.values)),
    "doc": ("document_external_id", str),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(REQUEST_FILTERS)))
class LLMRequestList(StudyScoped, generics.ListAPIView):
    """Every request the run sent and what came of it (one row per attempt), oldest first; `status` keeps one
    outcome (ok, http_error, timeout, malformed, refused, unreachable)."""

    serializer_class = s.LLMRequestSerializer
    filters = REQUEST_FILTERS

    def get_queryset(self):
        run = get_object_or_404(_runs(self.study), pk=self.kwargs["run_pk"])
        return LLMRequest.objects.filter(run=run).order_by("id")
