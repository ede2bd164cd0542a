"""population.txt: the note every tabular export carries (the tidy CSV zip and directory, the TREC runs zip)
saying which analysis population's sessions it holds (studies/population.py; docs/file-formats.md)."""

from __future__ import annotations

from studies.models import Study
from studies.population import Population, population_count, study_population


def population_note(study: Study, population: Population | None) -> str:
    """The note's text (one query to count the participants in and out)."""
    if population is None:
        return "Population: every participant's sessions (no analysis population applied).\npopulation=all\n"
    count = population_count(study, population)
    default = study_population(study)
    which = (
        "The study's default population."
        if population == default
        else f"Not the study's default ({default.code()})."
    )
    left = ", ".join(count.left_out) or "none"
    return (
        f"Population: {population.text()}.\n"
        f"population={population.code()}\n"
        f"{which}\n"
        f"Participants: {count.counted} of the {count.enrolled} enrolled.\n"
        f"Left out: {left}.\n"
    )
