"""Scenarios and systems: plain CRUD written by the design services, closed (409) once participants are
enrolled (THE design-lock rule, services.design_check_unlocked)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.response import Response

from studies.api import serializers as s
from studies.api.views.common import (
    OneOf,
    StudyScoped,
    conflict,
    filter_parameters,
)
from studies.design import services
from studies.errors import SystemConfigError
from studies.models import (
    Scenario,
    System,
)
from studies.search.generative_keys import system_key_update


def key_fields_pop(model, data: dict) -> dict | None:
    """A system's key fields taken out of a serializer's data (the design services never see a key; a key
    left for an endpoint that moved is removed after the save, generative_keys.system_key_update), or None
    for a scenario."""
    if model is not System:
        return None
    return {"api_key": data.pop("api_key", ""), "clear": data.pop("clear_api_key", False)}


class DesignList(StudyScoped, generics.ListCreateAPIView):
    model: type[Scenario | System] | None = None

    def get_queryset(self):
        return self.model.objects.filter(study=self.study).order_by("id")

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        add = services.scenario_add if self.model is Scenario else services.system_add
        key = key_fields_pop(self.model, serializer.validated_data)
        try:
            with transaction.atomic():
                row = add(study=self.study, **serializer.validated_data)
                if key is not None:
                    system_key_update(system=row, **key)
        except services.DesignLockedError as error:
            return conflict(str(error))
        except SystemConfigError as error:  # the service's own check, should a serializer ever let one by
            return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        except IntegrityError:
            return conflict("the code (or topic id) is already used in this study")
        return Response(self.get_serializer(row).data, status=status.HTTP_201_CREATED)


class DesignDetail(StudyScoped, generics.RetrieveUpdateDestroyAPIView):
    model: type[Scenario | System] | None = None
    lookup_url_kwarg = "pk"

    def get_queryset(self):
        return self.model.objects.filter(study=self.study)

    def update(self, request, *args, **kwargs):
        try:
            with transaction.atomic():
                # Before the body is validated, as ever: a locked design is a 409 whatever was sent. In the
                # write's transaction, so the study row stays locked until the change is stored.
                services.design_check_unlocked(study=self.study)
                return super().update(request, *args, **kwargs)
        except services.DesignLockedError as error:
            return conflict(str(error))
        except SystemConfigError as error:
            return Response({error.field: [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        except IntegrityError:
            return conflict("the code (or topic id) is already used in this study")

    def perform_update(self, serializer):
        key = key_fields_pop(self.model, serializer.validated_data)
        serializer.instance = services.design_row_update(
            study=self.study, row=serializer.instance, **serializer.validated_data
        )
        if key is not None:
            system_key_update(system=serializer.instance, **key)

    def destroy(self, request, *args, **kwargs):
        try:
            return super().destroy(request, *args, **kwargs)
        except services.DesignLockedError as error:
            return conflict(str(error))

    def perform_destroy(self, instance):
        services.design_row_delete(study=self.study, row=instance)


SCENARIO_FILTERS = {"code": ("code", str), "topic_id": ("topic_id", str)}
SYSTEM_FILTERS = {"code": ("code", str), "backend": ("backend", OneOf(System.Backend.values))}


@extend_schema_view(get=extend_schema(parameters=filter_parameters(SCENARIO_FILTERS)))
class ScenarioList(DesignList):
    """The study's scenarios (each linked to a qrels topic). Adding one is refused (409) once participants
    exist."""

    model, serializer_class, filters = Scenario, s.ScenarioSerializer, SCENARIO_FILTERS


class ScenarioDetail(DesignDetail):
    model, serializer_class = Scenario, s.ScenarioSerializer


@extend_schema_view(get=extend_schema(parameters=filter_parameters(SYSTEM_FILTERS)))
class SystemList(DesignList):
    """The study's systems. Adding one is refused (409) once participants exist."""

    model, serializer_class, filters = System, s.SystemSerializer, SYSTEM_FILTERS


class SystemDetail(DesignDetail):
    model, serializer_class = System, s.SystemSerializer
