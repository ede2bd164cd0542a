"""What the scoring API's views share: the run of the URL (RunScoped), a true/false query parameter, the
codes that filter by system, scenario and participant, a list of floats."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from studies.api.population_params import population_parameters
from studies.api.views.common import StudyCode, StudyScoped

from ..models import ScoringRun

FLOATS = serializers.ListField(child=serializers.FloatField())


def query_flag(request, name: str) -> bool:
    raw = request.query_params.get(name, "")
    if raw.lower() not in {"", "true", "false", "1", "0"}:
        raise ValidationError({name: "expected true or false"})
    return raw.lower() in {"true", "1"}


def study_runs(study):
    return ScoringRun.objects.filter(study=study).select_related("reference_version", "created_by")


class RunScoped(StudyScoped):
    """A view under .../scoring-runs/<run_pk>/: the run, of the visible study, or 404."""

    @property
    def run(self) -> ScoringRun:
        if not hasattr(self, "_run"):
            self._run = get_object_or_404(study_runs(self.study), pk=self.kwargs["run_pk"])
        return self._run


SYSTEM_CODE = StudyCode("systems", "system")


SCENARIO_CODE = StudyCode("scenarios", "scenario")


PARTICIPANT_CODE = StudyCode("participants", "participant")


# The analysis population of a run's read paths (studies/population.py): the study's default unless asked.
POPULATION_PARAMETERS = population_parameters()
