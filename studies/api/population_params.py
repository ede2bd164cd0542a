"""The analysis population a researcher API request asks for (`population`, `leave_out`;
studies/population.py): its OpenAPI parameters and its reading, one home for the studies API's downloads and
scoring's run reads."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError

from studies.api.views.common import query_parameter
from studies.population import Population, PopulationError, population_from_query

POPULATION_HELP = (
    "whose sessions: completers, itt, or either with leave-outs after a colon (itt:excluded,timed_out); "
    "the study's default when absent (docs/dashboards.md, Populations)"
)


def population_parameters(more: str = "") -> list:
    """The two query parameters, for `extend_schema(parameters=...)`; `more` ends the population's help."""
    return [
        query_parameter("population", str, POPULATION_HELP + more),
        query_parameter("leave_out", str, "more leave-outs, separated by commas"),
    ]


def request_population(request, study) -> Population:
    """The population a request asks for (the study's default when none); a 400 naming the parameter."""
    try:
        return population_from_query(request.query_params, study)
    except PopulationError as exc:
        name = "leave_out" if str(exc).startswith("leave_out") else "population"
        raise ValidationError({name: str(exc)}) from None
