"""API views: generic views for plain reads and CRUD, explicit views (input serializer -> service -> output
serializer) where a write has side effects. Every researcher view is scoped to one study the caller may see
(`visible_study`, 404 otherwise); list querysets load their relations in a fixed number of queries."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Count, Prefetch
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from scoring.lib.errors import InputError
from studies.api import serializers as s
from studies.api.permissions import IsParticipant, IsResearcher, ParticipantTokenAuthentication, visible_study
from studies.assessment.services import (
    AssessmentError,
    reference_version_import_qrels,
    reference_version_qrels,
)
from studies.design import services
from studies.design.selectors import collections_visible_to, events_readable, studies_visible_to
from studies.errors import DesignError
from studies.models import (
    Assignment,
    Event,
    Judgment,
    Participant,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    Scenario,
    SearchSession,
    ShownResult,
    System,
)
from studies.participation import steps as participation


class ApiPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


def query_parameter(name: str, type_=str, description: str = "", enum=None) -> OpenApiParameter:
    kind = {str: OpenApiTypes.STR, int: OpenApiTypes.INT, bool: OpenApiTypes.BOOL}[type_]
    return OpenApiParameter(name, kind, OpenApiParameter.QUERY, required=False, description=description,
                            enum=enum)


class OneOf:
    """A filter value that must be one of `values` (or of `values(view)`, e.g. the study's grades), after
    conversion to `type_`: anything else is a 400 naming the choices, never an empty list."""

    def __init__(self, values, type_=str):
        self.values, self.type_ = values, type_

    def allowed(self, view) -> list:
        return list(self.values(view) if callable(self.values) else self.values)


class StudyCode:
    """A filter naming one of the study's scenarios, systems or participants by its code: a code that names
    nothing in the study is a 400, not an empty page that reads as "nothing there"."""

    type_ = str

    def __init__(self, relation: str, what: str):
        self.relation, self.what = relation, what


def _convert(name: str, raw: str, type_):
    if type_ is bool:
        if raw.lower() not in {"true", "false", "1", "0"}:
            raise ValidationError({name: "expected true or false"})
        return raw.lower() in {"true", "1"}
    if type_ is int:
        try:
            value = int(raw)
        except ValueError:
            raise ValidationError({name: "expected an integer"}) from None
        if not -(2**63) <= value < 2**63:  # the databases' bigint: beyond it they raise, not match
            raise ValidationError({name: "out of range"})
        return value
    return raw


class FilterMixin:
    """Filtering by query parameters: `filters` maps a parameter to (ORM lookup, type), the type str, int,
    bool, a `OneOf` or a `StudyCode`. A value that does not convert, or is none of the choices, is a 400
    naming the parameter. A lookup starting with "!" is negated: ("!consented_at__isnull", bool) makes
    consented=true mean consented_at IS NOT NULL.

    A list refuses a query parameter it does not know (a 400 naming it and the ones it takes): a misspelt
    filter would otherwise answer the unfiltered list. `extra_parameters` names the list's other ones."""

    filters: dict[str, tuple[str, object]] = {}
    extra_parameters: tuple[str, ...] = ()

    def list(self, request, *args, **kwargs):
        self.check_query_parameters()
        return super().list(request, *args, **kwargs)

    def known_query_parameters(self) -> set[str]:
        known = {*self.filters, *self.extra_parameters, "format"}
        paginator = self.paginator
        for attribute in ("page_query_param", "page_size_query_param", "cursor_query_param"):
            if getattr(paginator, attribute, None):
                known.add(getattr(paginator, attribute))
        return known

    def check_query_parameters(self) -> None:
        known = self.known_query_parameters()
        unknown = sorted(set(self.request.query_params) - known)
        if unknown:
            takes = ", ".join(sorted(known))
            raise ValidationError({name[:40]: f"unknown query parameter (this list takes {takes})"
                                   for name in unknown})
        # DRF's paginators ignore a page size they cannot read (the default page, as if it were not sent).
        size_parameter = getattr(self.paginator, "page_size_query_param", None)
        size = self.request.query_params.get(size_parameter) if size_parameter else None
        if size is not None and not (size.isascii() and size.isdigit() and int(size) > 0):
            raise ValidationError({size_parameter: "expected a positive integer"})

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        for name, (lookup, type_) in self.filters.items():
            raw = self.request.query_params.get(name)
            if raw is None or raw == "":
                continue
            if "\x00" in raw:  # PostgreSQL cannot compare text holding NUL: refuse it here, not with a 500
                raise ValidationError({name: "must not contain a NUL character"})
            value = self.filter_value(name, raw, type_)
            if lookup.startswith("!"):
                lookup, value = lookup[1:], not value
            queryset = queryset.filter(**{lookup: value})
        return queryset

    def filter_value(self, name: str, raw: str, type_):
        if isinstance(type_, OneOf):
            value = _convert(name, raw, type_.type_)
            allowed = type_.allowed(self)
            if value not in allowed:
                raise ValidationError({name: f"{raw[:40]!r} is not one of {', '.join(map(str, allowed))}"})
            return value
        if isinstance(type_, StudyCode):
            if not getattr(self.study, type_.relation).filter(code=raw).exists():
                raise ValidationError({name: f"{raw[:40]!r} is not a {type_.what} code of this study"})
            return raw
        return _convert(name, raw, type_)


def filter_parameters(filters: dict[str, tuple[str, object]]) -> list[OpenApiParameter]:
    parameters = []
    for name, (lookup, type_) in filters.items():
        description = f"filter: {lookup.lstrip('!').replace('__', ' ')}"
        enum = None
        if isinstance(type_, OneOf) and not callable(type_.values):
            enum = list(type_.values)
        elif isinstance(type_, OneOf):
            description += " (one of the study's values; another is a 400)"
        elif isinstance(type_, StudyCode):
            description += f" (a {type_.what} code of the study; another is a 400)"
        parameters.append(query_parameter(name, getattr(type_, "type_", type_), description, enum))
    return parameters


class StudyScoped(FilterMixin):
    """A view under /api/studies/<study_pk>/: the study is fetched once, visible or 404."""

    permission_classes = [IsResearcher]
    pagination_class = ApiPagination

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # The study is checked before a body is read: another study's URL is a 404 whatever was sent.
        self.study  # noqa: B018

    @property
    def study(self):
        if not hasattr(self, "_study"):
            self._study = visible_study(self.request, self.kwargs["study_pk"])
        return self._study


def _conflict(message: str) -> Response:
    return Response({"detail": message}, status=status.HTTP_409_CONFLICT)


# --- studies --------------------------------------------------------------------------------------------

STUDY_FILTERS = {"slug": ("slug", str), "name": ("name__icontains", str), "owner": ("owner__username", str)}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(STUDY_FILTERS)))
class StudyList(FilterMixin, generics.ListAPIView):
    """The studies the caller owns or researches on. POST creates one (with its grade scale), owned by the caller."""

    serializer_class = s.StudySerializer
    permission_classes = [IsResearcher]
    pagination_class = ApiPagination
    filters = STUDY_FILTERS

    def get_queryset(self):
        return studies_visible_to(self.request.user).select_related("owner").prefetch_related("grade_levels")

    @extend_schema(request=s.StudyCreateSerializer, responses={201: s.StudySerializer})
    def post(self, request):
        data = s.StudyCreateSerializer(data=request.data, context={"request": request})
        data.is_valid(raise_exception=True)
        try:
            study = services.study_create(owner=request.user, **data.validated_data)
        except services.CollectionAccessError as error:
            raise ValidationError({"collection": str(error)}) from None
        except DesignError as error:
            raise ValidationError({"grade_labels": str(error)}) from None
        return Response(s.StudySerializer(study).data, status=status.HTTP_201_CREATED)


class StudyDetail(generics.RetrieveUpdateDestroyAPIView):
    serializer_class = s.StudySerializer
    permission_classes = [IsResearcher]
    lookup_url_kwarg = "study_pk"

    def get_queryset(self):
        return studies_visible_to(self.request.user).select_related("owner").prefetch_related("grade_levels")

    def perform_update(self, serializer):
        serializer.instance = services.study_update(study=serializer.instance, **serializer.validated_data)

    def perform_destroy(self, instance):
        try:
            services.study_delete(study=instance, by=self.request.user)
        except services.StudyOwnerOnlyError as error:
            raise PermissionDenied(str(error)) from None


# --- collections: the ones the caller may build studies on, and sharing them ----------------------------


def _collections(request):
    return (collections_visible_to(request.user).select_related("owner").prefetch_related("shared_with")
            .annotate(document_count=Count("documents")).order_by("name"))


class CollectionList(FilterMixin, generics.ListAPIView):
    """The collections the caller may build a study on (POST /api/studies/ with `collection`): their own, those
    shared with them and those of the studies they research on; every one for a superuser."""

    serializer_class = s.CollectionSerializer
    permission_classes = [IsResearcher]
    pagination_class = ApiPagination

    def get_queryset(self):
        return _collections(self.request)


class CollectionSharing(APIView):
    """Share a collection with a researcher (POST `{"username"}`; DELETE .../shared-with/<username>/ stops):
    `services.collection_share` / `collection_unshare`. A collection the caller cannot see is a 404; one they
    see but do not own is a 403 (only its owner, or a superuser, shares it); a name that is no researcher
    account is a 400 (the same for an assessor's name and an unknown one)."""

    permission_classes = [IsResearcher]

    def _collection(self, pk):
        collection = get_object_or_404(_collections(self.request), pk=pk)
        if not services.collection_may_share(self.request.user, collection):
            raise PermissionDenied("only the collection's owner shares it")
        return collection

    def _researcher(self, username: str):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.filter(username=username, is_staff=True, is_active=True).first()
        if user is None:
            raise ValidationError({"username": f"no researcher account named {username!r}"})
        return user

    def _answer(self, collection):
        fresh = _collections(self.request).get(pk=collection.pk)
        return Response(s.CollectionSerializer(fresh, context={"request": self.request}).data)

    @extend_schema(request=s.CollectionShareSerializer, responses={200: s.CollectionSerializer})
    def post(self, request, pk):
        collection = self._collection(pk)
        data = s.CollectionShareSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = self._researcher(data.validated_data["username"])
        try:
            services.collection_share(collection=collection, user=user, by=request.user)
        except services.CollectionAccessError as error:
            raise ValidationError({"username": str(error)}) from None
        return self._answer(collection)



class CollectionUnsharing(CollectionSharing):
    """Stop sharing the collection with this researcher (their studies already built on it keep it)."""

    http_method_names = ["delete", "options"]

    @extend_schema(request=None, responses={200: s.CollectionSerializer})
    def delete(self, request, pk, username):
        collection = self._collection(pk)
        services.collection_unshare(collection=collection, user=self._researcher(username), by=request.user)
        return self._answer(collection)


# --- scenarios and systems: plain CRUD, closed once participants are enrolled --------------------------


class DesignList(StudyScoped, generics.ListCreateAPIView):
    model = None

    def get_queryset(self):
        return self.model.objects.filter(study=self.study).order_by("id")

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        add = services.scenario_add if self.model is Scenario else services.system_add
        try:
            with transaction.atomic():
                row = add(study=self.study, **serializer.validated_data)
        except services.DesignLockedError as error:
            return _conflict(str(error))
        except IntegrityError:
            return _conflict("the code (or topic id) is already used in this study")
        return Response(self.get_serializer(row).data, status=status.HTTP_201_CREATED)


class DesignDetail(StudyScoped, generics.RetrieveUpdateDestroyAPIView):
    model = None
    lookup_url_kwarg = "pk"

    def get_queryset(self):
        return self.model.objects.filter(study=self.study)

    def update(self, request, *args, **kwargs):
        try:
            # Before the body is validated, as ever: a locked design is a 409 whatever was sent.
            services.design_check_unlocked(study=self.study)
            with transaction.atomic():
                return super().update(request, *args, **kwargs)
        except services.DesignLockedError as error:
            return _conflict(str(error))
        except IntegrityError:
            return _conflict("the code (or topic id) is already used in this study")

    def perform_update(self, serializer):
        serializer.instance = services.design_row_update(study=self.study, row=serializer.instance,
                                                         **serializer.validated_data)

    def destroy(self, request, *args, **kwargs):
        try:
            return super().destroy(request, *args, **kwargs)
        except services.DesignLockedError as error:
            return _conflict(str(error))

    def perform_destroy(self, instance):
        services.design_row_delete(study=self.study, row=instance)


SCENARIO_FILTERS = {"code": ("code", str), "topic_id": ("topic_id", str)}
SYSTEM_FILTERS = {"code": ("code", str), "backend": ("backend", OneOf(System.Backend.values))}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(SCENARIO_FILTERS)))
class ScenarioList(DesignList):
    """The study's scenarios (each linked to a qrels topic). Adding one is refused (409) once participants exist."""

    model, serializer_class, filters = Scenario, s.ScenarioSerializer, SCENARIO_FILTERS


class ScenarioDetail(DesignDetail):
    model, serializer_class = Scenario, s.ScenarioSerializer


@extend_schema_view(get=extend_schema(parameters=filter_parameters(SYSTEM_FILTERS)))
class SystemList(DesignList):
    """The study's systems. Adding one is refused (409) once participants exist."""

    model, serializer_class, filters = System, s.SystemSerializer, SYSTEM_FILTERS


class SystemDetail(DesignDetail):
    model, serializer_class = System, s.SystemSerializer


class GradeLevelList(StudyScoped, generics.ListAPIView):
    """The study's relevance scale (fixed at creation)."""

    serializer_class = s.GradeLevelSerializer

    def get_queryset(self):
        return self.study.grade_levels.order_by("value")


# --- participants ---------------------------------------------------------------------------------------

PARTICIPANT_FILTERS = {
    "code": ("code", str),
    "consented": ("!consented_at__isnull", bool),
    "withdrawn": ("!withdrawn_at__isnull", bool),
}


def _participants(study):
    assignments = Assignment.objects.select_related("scenario", "system", "session").order_by("position")
    return study.participants.order_by("enrolment_index").prefetch_related(Prefetch("assignments", queryset=assignments))


@extend_schema_view(get=extend_schema(parameters=filter_parameters(PARTICIPANT_FILTERS)))
class ParticipantList(StudyScoped, generics.ListAPIView):
    """Participants with their assignments (scenario, system, position, session). Enrol with POST .../enrol/."""

    serializer_class = s.ParticipantSerializer
    filters = PARTICIPANT_FILTERS

    def get_queryset(self):
        return _participants(self.study)


class ParticipantDetail(StudyScoped, generics.RetrieveAPIView):
    serializer_class = s.ParticipantSerializer

    def get_queryset(self):
        return _participants(self.study)


class ParticipantEnrol(StudyScoped, APIView):
    """Enrol `count` participants: each gets the next rows of the study's balanced (Latin square) plan."""

    pagination_class = None  # answers a plain list; the schema said a paginated page

    @extend_schema(request=s.EnrolSerializer, responses={201: s.ParticipantSerializer(many=True)})
    def post(self, request, study_pk):
        data = s.EnrolSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            enrolled = services.participants_enrol(study=self.study, count=data.validated_data["count"])
        except DesignError as error:
            return _conflict(str(error))
        participants = _participants(self.study).filter(pk__in=[p.pk for p in enrolled])
        return Response(s.ParticipantSerializer(participants, many=True).data, status=status.HTTP_201_CREATED)


class ParticipantWithdraw(StudyScoped, APIView):
    """Withdraw a participant on their behalf: their data is deleted, an audit entry records that it happened."""

    @extend_schema(request=None, responses={200: s.ParticipantSerializer})
    def post(self, request, study_pk, pk):
        participant = get_object_or_404(Participant, study=self.study, pk=pk)
        participation.participant_withdraw(participant=participant)
        return Response(s.ParticipantSerializer(_participants(self.study).get(pk=pk)).data)


# --- sessions, queries, judgments, events (read-only: participants write them) --------------------------

PARTICIPANT_CODE = StudyCode("participants", "participant")
SCENARIO_CODE = StudyCode("scenarios", "scenario")
SYSTEM_CODE = StudyCode("systems", "system")

SESSION_FILTERS = {
    "participant": ("assignment__participant__code", PARTICIPANT_CODE),
    "scenario": ("assignment__scenario__code", SCENARIO_CODE),
    "system": ("assignment__system__code", SYSTEM_CODE),
    "position": ("assignment__position", int),
    "end_reason": ("end_reason", OneOf(SearchSession.EndReason.values)),
    "open": ("ended_at__isnull", bool),
}


def _sessions(study):
    return (
        SearchSession.objects.filter(assignment__participant__study=study)
        .select_related("assignment__participant", "assignment__scenario", "assignment__system")
        .annotate(query_count=Count("queries", distinct=True))
        .order_by("id")
    )


def _shown():
    return Prefetch("shown_results", queryset=ShownResult.objects.select_related("document").order_by("rank"))


def _history_judgments():
    return Judgment.objects.select_related("document", "session__assignment__participant").prefetch_related(
        "history").order_by("id")


@extend_schema_view(get=extend_schema(parameters=filter_parameters(SESSION_FILTERS)))
class SessionList(StudyScoped, generics.ListAPIView):
    """Search sessions with their design; `open=true` lists the sessions not ended yet."""

    serializer_class = s.SessionSerializer
    filters = SESSION_FILTERS

    def get_queryset(self):
        return _sessions(self.study)


class SessionDetail(StudyScoped, generics.RetrieveAPIView):
    """One session with its queries (and the results shown for each) and its judgments (with their history)."""

    serializer_class = s.SessionDetailSerializer

    def get_queryset(self):
        queries = Query.objects.order_by("position").prefetch_related(_shown())
        return _sessions(self.study).prefetch_related(
            Prefetch("queries", queryset=queries), Prefetch("judgments", queryset=_history_judgments()))


QUERY_FILTERS = {
    "session": ("session_id", int),
    "participant": ("session__assignment__participant__code", PARTICIPANT_CODE),
    "scenario": ("session__assignment__scenario__code", SCENARIO_CODE),
    "system": ("session__assignment__system__code", SYSTEM_CODE),
    "position": ("position", int),
    "text": ("text__icontains", str),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(QUERY_FILTERS)))
class QueryList(StudyScoped, generics.ListAPIView):
    """Queries with the results shown for them."""

    serializer_class = s.QuerySerializer
    filters = QUERY_FILTERS

    def get_queryset(self):
        return (Query.objects.filter(session__assignment__participant__study=self.study)
                .prefetch_related(_shown()).order_by("session_id", "position"))


JUDGMENT_FILTERS = {
    "session": ("session_id", int),
    "participant": ("session__assignment__participant__code", PARTICIPANT_CODE),
    "scenario": ("session__assignment__scenario__code", SCENARIO_CODE),
    "system": ("session__assignment__system__code", SYSTEM_CODE),
    "doc": ("document__external_id", str),
    "grade": ("grade", OneOf(lambda view: view.study.grade_values(), int)),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(JUDGMENT_FILTERS)))
class JudgmentList(StudyScoped, generics.ListAPIView):
    """Participants' current judgments, each with every change."""

    serializer_class = s.JudgmentSerializer
    filters = JUDGMENT_FILTERS

    def get_queryset(self):
        return _history_judgments().filter(session__assignment__participant__study=self.study)


EVENT_FILTERS = {
    "participant": ("participant__code", PARTICIPANT_CODE),
    "session": ("session_id", int),
    "type": ("type", str),
}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(EVENT_FILTERS)))
class EventList(StudyScoped, generics.ListAPIView):
    """The raw, append-only event log: every action as the client reported it, with the server's answer."""

    serializer_class = s.EventSerializer
    filters = EVENT_FILTERS

    def get_queryset(self):
        # Client times Python cannot hold (stored before they were refused) read as null, not a 500.
        return events_readable(Event.objects.filter(participant__study=self.study).select_related("participant")
                               .order_by("id"))


# --- reference versions ---------------------------------------------------------------------------------


class ReferenceVersionList(StudyScoped, generics.ListAPIView):
    """The study's reference judgment versions (numbered from 1). Import qrels as a new version with POST
    .../reference-versions/import-qrels/."""

    serializer_class = s.ReferenceVersionSerializer

    def get_queryset(self):
        return (ReferenceVersion.objects.filter(study=self.study).select_related("created_by")
                .annotate(judgment_count=Count("judgments")).order_by("number"))


class ReferenceVersionDetail(StudyScoped, generics.RetrieveAPIView):
    serializer_class = s.ReferenceVersionSerializer

    def get_queryset(self):
        return ReferenceVersionList.get_queryset(self)


class ReferenceVersionImportQrels(StudyScoped, APIView):
    """A new reference version from TREC qrels (multipart: a `file`, or the qrels in a `text` field), all or nothing: a bad line,
    an unknown document, a grade outside the study's scale, or a file with no scenario topic is a 400 naming
    file, line and reason. Judgments of topics that are not scenarios are kept (an exported version imports
    again unchanged)."""

    # The one body that is not JSON: a file upload, so multipart only (one content type in the schema).
    parser_classes = [MultiPartParser]

    @extend_schema(request=s.QrelsImportSerializer, responses={201: s.ReferenceVersionSerializer})
    def post(self, request, study_pk):
        data = s.QrelsImportSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if "file" in data.validated_data:
            upload = data.validated_data["file"]
            path = upload.name
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise ValidationError({"file": f"{path}: not UTF-8 text"}) from None
        else:
            path, text = "<text>", data.validated_data["text"]
        try:
            version = reference_version_import_qrels(study=self.study, lines=text.splitlines(), path=path,
                                                     created_by=request.user, note=data.validated_data["note"])
        except InputError as error:
            return Response({"detail": str(error), "file": error.path, "line": error.line, "reason": error.reason},
                            status=status.HTTP_400_BAD_REQUEST)
        except AssessmentError as error:
            return _conflict(str(error))
        version = ReferenceVersionList.get_queryset(self).get(pk=version.pk)
        return Response(s.ReferenceVersionSerializer(version).data, status=status.HTTP_201_CREATED)


class ReferenceVersionQrels(StudyScoped, APIView):
    """The version as a TREC qrels file (text/plain)."""

    @extend_schema(responses={(200, "text/plain"): OpenApiTypes.STR})
    def get(self, request, study_pk, pk):
        version = get_object_or_404(ReferenceVersion, study=self.study, pk=pk)
        return HttpResponse(reference_version_qrels(version=version), content_type="text/plain; charset=utf-8")


REFERENCE_FILTERS = {"topic_id": ("topic_id", str), "doc": ("document__external_id", str), "grade": ("grade", int)}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(REFERENCE_FILTERS)))
class ReferenceJudgmentList(StudyScoped, generics.ListAPIView):
    serializer_class = s.ReferenceJudgmentSerializer
    filters = REFERENCE_FILTERS

    def get_queryset(self):
        version = get_object_or_404(ReferenceVersion, study=self.study, pk=self.kwargs["version_pk"])
        return ReferenceJudgment.objects.filter(version=version).select_related("document").order_by(
            "topic_id", "document__external_id")


# --- the participant's own endpoints --------------------------------------------------------------------


class ParticipantScoped:
    authentication_classes = [ParticipantTokenAuthentication]
    permission_classes = [IsParticipant]

    @property
    def participant(self) -> Participant:
        return self.request.auth


class ParticipantMe(ParticipantScoped, APIView):
    """Who the token belongs to: the participant's code, study and assignments (with session ids)."""

    @extend_schema(responses=s.ParticipantMeSerializer)
    def get(self, request):
        participant = _participants(self.participant.study).select_related("study").get(pk=self.participant.pk)
        return Response(s.ParticipantMeSerializer(participant).data)


class ParticipantSessionStart(ParticipantScoped, APIView):
    """Start (or resume) the session of the assignment at `assignment` (its position in the order); the
    participant must have consented and answered the questionnaire, and works the scenarios in order."""

    @extend_schema(request=s.SessionStartSerializer, responses={201: s.SessionSerializer})
    def post(self, request):
        data = s.SessionStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = Assignment.objects.filter(participant=self.participant,
                                               position=data.validated_data["assignment"]).first()
        if assignment is None:
            raise ValidationError({"assignment": "no assignment at this position"})
        try:
            session = participation.session_start(participant=self.participant, assignment=assignment,
                                                  client_event_id=data.validated_data["client_event_id"])
        except participation.Refused as refusal:
            return _conflict(refusal.message)
        except participation.InvalidEvent as error:
            raise ValidationError({"client_event_id": str(error)}) from None
        return Response(s.SessionSerializer(_sessions(self.participant.study).get(pk=session.pk)).data,
                        status=status.HTTP_201_CREATED)


class ParticipantEvents(ParticipantScoped, APIView):
    """Log a batch of client events (at most 200), each stored once by its client event id: a re-sent batch
    stores nothing twice and gets the same acknowledgements. Events are those of the built-in interface
    (studies/participation/steps.py); only the participant's own sessions are accepted."""

    @extend_schema(request=s.EventBatchDocSerializer, responses={200: s.AckBatchSerializer})
    def post(self, request):
        # Only the batch's shape is checked here: each event is checked on its own (studies/participation/event_checks.py),
        # so one malformed event gets its own refusal and the others are stored.
        events = request.data.get("events") if isinstance(request.data, dict) else None
        if not isinstance(events, list) or not events:
            raise ValidationError({"events": 'expected {"events": [one or more events]}'})
        if too_many := participation.too_many_events(events):
            return Response({"events": too_many}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        acks = participation.events_ingest(participant=self.participant, events=events)
        return Response({"acks": acks})

