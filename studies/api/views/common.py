"""What every API view shares: pagination, strict query-parameter filters (`FilterMixin`, `OneOf`,
`StudyCode`) and their schema (`filter_parameters`), `StudyScoped` for the views under
/api/studies/<study_pk>/ (the study the caller may see, 404 otherwise), and the 409 answer `conflict`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination, PageNumberPagination
from rest_framework.response import Response

from studies.api.permissions import IsResearcher, visible_study

if TYPE_CHECKING:
    from rest_framework.permissions import BasePermission, OperandHolder, SingleOperandHolder
    from rest_framework.views import APIView

    from studies.models import Study

    ApiViewBase = APIView  # the mixins below are always mixed into DRF views: the type checker sees it
    # APIView.permission_classes as DRF's stubs type it (IsA | IsB makes an OperandHolder)
    PermissionClasses = Sequence[type[BasePermission] | OperandHolder | SingleOperandHolder]
else:
    ApiViewBase = object


class ApiPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


def query_parameter(name: str, type_=str, description: str = "", enum=None) -> OpenApiParameter:
    kind = {str: OpenApiTypes.STR, int: OpenApiTypes.INT, bool: OpenApiTypes.BOOL}[type_]
    return OpenApiParameter(
        name, kind, OpenApiParameter.QUERY, required=False, description=description, enum=enum
    )


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
        except ValueError:  # int()'s own "not an integer": the try holds nothing else, so no bug hides here
            raise ValidationError({name: "expected an integer"}) from None
        if not -(2**63) <= value < 2**63:  # the databases' bigint: beyond it they raise, not match
            raise ValidationError({name: "out of range"})
        return value
    return raw


class FilterMixin(ApiViewBase):
    """Filtering by query parameters: `filters` maps a parameter to (ORM lookup, type), the type str, int,
    bool, a `OneOf` or a `StudyCode`. A value that does not convert, or is none of the choices, is a 400
    naming the parameter. A lookup starting with "!" is negated: ("!consented_at__isnull", bool) makes
    consented=true mean consented_at IS NOT NULL.

    A list refuses a query parameter it does not know (a 400 naming it and the ones it takes): a misspelt
    filter would otherwise answer the unfiltered list. `extra_parameters` names the list's other ones."""

    filters: Mapping[str, tuple[str, object]] = {}
    extra_parameters: tuple[str, ...] = ()
    # The lookup from a row to its participant's preview_at: a list of a study's rows leaves out a
    # researcher's try-out (preview) participants' rows unless asked, `previews=include` (PREVIEWS).
    preview_lookup: str | None = None

    if TYPE_CHECKING:  # what the generic view or StudyScoped provides

        @property
        def paginator(self) -> BasePagination | None: ...

        @property
        def study(self) -> Study: ...  # a StudyCode filter is only given to a StudyScoped view

    def list(self, request, *args, **kwargs):
        self.check_query_parameters()
        return super().list(request, *args, **kwargs)

    def known_query_parameters(self) -> set[str]:
        known = {*self.filters, *self.extra_parameters, "format"}
        if self.preview_lookup is not None:
            known.add("previews")
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
            raise ValidationError(
                {name[:40]: f"unknown query parameter (this list takes {takes})" for name in unknown}
            )
        # DRF's paginators ignore a page size they cannot read (the default page, as if it were not sent).
        size_parameter = getattr(self.paginator, "page_size_query_param", None)
        size = self.request.query_params.get(size_parameter) if size_parameter else None
        if size is not None and size_parameter and not (size.isascii() and size.isdigit() and int(size) > 0):
            raise ValidationError({size_parameter: "expected a positive integer"})

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        if self.preview_lookup is not None:
            raw = self.request.query_params.get("previews") or "exclude"
            if self.filter_value("previews", raw, PREVIEWS) == "exclude":
                queryset = queryset.filter(**{f"{self.preview_lookup}__isnull": True})
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


PREVIEWS = OneOf(("exclude", "include"))


def previews_parameter() -> OpenApiParameter:
    return query_parameter(
        "previews",
        str,
        "a researcher's preview (try-out) participants are left out (exclude, the default); include lists"
        " them too",
        enum=list(PREVIEWS.values),
    )


def filter_parameters(
    filters: Mapping[str, tuple[str, object]], *, previews: bool = False
) -> list[OpenApiParameter]:
    parameters = [previews_parameter()] if previews else []
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

    permission_classes: PermissionClasses = [IsResearcher]
    pagination_class: type[BasePagination] | None = ApiPagination

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # The study is checked before a body is read: another study's URL is a 404 whatever was sent.
        self.study  # noqa: B018

    @property
    def study(self) -> Study:
        if not hasattr(self, "_study"):
            self._study = visible_study(self.request, self.kwargs["study_pk"])
        return self._study


def conflict(message: str) -> Response:
    return Response({"detail": message}, status=status.HTTP_409_CONFLICT)
