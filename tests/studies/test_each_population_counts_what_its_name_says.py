"""The analysis population's one definition (studies/population.py): each base and each leave-out
keeps exactly the participants its name says, whatever their state (null reads as invited), and never a
preview; the text form reads back to itself; a name that is none of them is refused with what and where; the
study API stores the default, checked the same way."""

import pytest
from django.utils import timezone

from studies.design import services
from studies.models import Participant
from studies.population import (
    BASES,
    DEFAULT,
    LEAVE_OUTS,
    Population,
    PopulationError,
    population_count,
    population_participants,
    population_stamp,
    study_population,
)
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db

# code: (state, state reason, marked excluded)
CAST = {
    "NEW": (None, None, False),
    "INV": ("invited", None, False),
    "STA": ("started", None, False),
    "ACT": ("active", None, False),
    "DONE": ("completed", None, False),
    "FLAG": ("completed", "effort below the study's rules: task 1 has 0 queries", False),
    "MARK": ("completed", None, True),
    "RET": ("returned", None, False),
    "LATE": ("timed_out", "no activity for 60 minutes", False),
    "SCR": ("screened_out", "answered no to the screening question", False),
    "FAIL": ("screened_out", "failed checks: attention check 1", False),
    "GONE": ("withdrawn", "declined consent", False),
}
EXPECTED = {
    "excluded": {"MARK"},
    "failed_checks": {"FAIL"},
    "screened_out": {"SCR", "FAIL"},
    "timed_out": {"LATE"},
    "returned": {"RET"},
    "withdrawn": {"GONE"},
    "effort_flagged": {"FLAG"},
    "unfinished": {"NEW", "INV", "STA", "ACT"},
}


@pytest.fixture
def cast(study):
    now = timezone.now()
    Participant.objects.bulk_create(
        Participant(
            study=study,
            code=code,
            enrolment_index=index,
            state=state,
            state_reason=reason,
            excluded_at=now if marked else None,
        )
        for index, (code, (state, reason, marked)) in enumerate(CAST.items())
    )
    Participant.objects.create(study=study, code="PREVIEW", enrolment_index=99, preview_at=now)
    return study


def _codes(study, population) -> set[str]:
    return set(population_participants(study, population).values_list("code", flat=True))


def test_the_bases_keep_everyone_enrolled_or_the_completers(cast):
    assert _codes(cast, Population("itt")) == set(CAST)  # never the preview
    assert _codes(cast, Population("completers")) == {"DONE", "FLAG", "MARK"}


@pytest.mark.parametrize("key", list(LEAVE_OUTS))
def test_each_leave_out_removes_exactly_its_participants(cast, key):
    assert EXPECTED.keys() == LEAVE_OUTS.keys()
    assert _codes(cast, Population("itt", frozenset({key}))) == set(CAST) - EXPECTED[key]
    completed = {"DONE", "FLAG", "MARK"}
    assert _codes(cast, Population("completers", frozenset({key}))) == completed - EXPECTED[key]
    count = population_count(cast, Population("itt", frozenset({key})))
    assert (count.enrolled, count.counted, set(count.left_out)) == (
        12,
        12 - len(EXPECTED[key]),
        EXPECTED[key],
    )


def test_the_text_reads_back_and_a_bad_one_says_what_is_wrong():
    for base in BASES:
        for keys in ((), ("excluded",), ("timed_out", "excluded", "withdrawn")):
            population = Population(base, frozenset(keys))
            assert Population.parse(population.code()) == population
    assert Population.parse(" itt : withdrawn , excluded ").code() == "itt:excluded,withdrawn"
    assert DEFAULT.code() == "itt:excluded"
    with pytest.raises(PopulationError, match="population: 'all' is not one of itt, completers"):
        Population.parse("all")
    with pytest.raises(PopulationError, match="leave_out: 'dropouts' is not one of excluded, "):
        Population.parse("itt:dropouts")


def test_the_stamp_moves_with_every_change_of_membership(cast):
    before = population_stamp(cast)
    late = Participant.objects.get(study=cast, code="ACT")
    Participant.objects.filter(pk=late.pk).update(state="timed_out", state_changed_at=timezone.now())
    moved = population_stamp(cast)
    assert moved != before
    Participant.objects.filter(study=cast, code="MARK").update(excluded_at=None)  # a mark cleared
    assert population_stamp(cast) != moved


def test_the_study_api_stores_the_default_checked(cast):
    api = client_for(cast.owner)
    assert study_population(cast) == DEFAULT
    response = api.patch(
        f"/api/studies/{cast.pk}/", {"analysis_population": "itt:withdrawn,excluded"}, format="json"
    )
    assert response.status_code == 200 and response.json()["analysis_population"] == "itt:excluded,withdrawn"
    cast.refresh_from_db()
    assert study_population(cast) == Population("itt", frozenset({"excluded", "withdrawn"}))
    bad = api.patch(f"/api/studies/{cast.pk}/", {"analysis_population": "itt:dropouts"}, format="json")
    assert bad.status_code == 400 and "dropouts" in str(bad.json()["analysis_population"])
    cast.refresh_from_db()
    assert cast.analysis_population == "itt:excluded,withdrawn"
    services.study_update(study=cast, analysis_population=None)
    assert study_population(cast) == DEFAULT
