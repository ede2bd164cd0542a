"""Code modes: a code generated per participant is theirs alone and the same every time they ask; a pool's
codes are handed out once each, by one conditional UPDATE (a completer who read a free code another took first
moves on to the next), with a plain message when the pool runs out; a bad pool upload is refused line by line
and adds nothing; Prolific keeps one code per study."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from studies.errors import RecruitmentError
from studies.models import AuditEntry, CompletionCode, Recruitment
from studies.participation.recruitment import codes
from studies.participation.recruitment.codes import completion_pool_add, pool_counts
from studies.participation.recruitment.completion import completion_of
from studies.participation.recruitment.panels import recruitment_update
from studies.participation.recruitment.states import participant_visit

from .conftest import finish, join

pytestmark = pytest.mark.django_db


@pytest.fixture
def mturk_study(panel_study):
    recruitment_update(study=panel_study, panel="generic")
    return panel_study


def completer(study, pid):
    """A participant who worked every task to the end and opened their link again: completed."""
    person = finish(join(study, pid).participant)
    assert participant_visit(participant=person) == "completed"
    return person


def code_of(participant):
    completion = completion_of(participant)
    assert completion is not None and completion.kind == "completed"
    return completion


def test_each_participant_gets_their_own_generated_code_every_time(mturk_study):
    recruitment_update(study=mturk_study, code_mode="per_participant")
    first, second = completer(mturk_study, "w-1"), completer(mturk_study, "w-2")
    one, two = code_of(first).code, code_of(second).code
    assert one != two and len(one) == codes.GENERATED_LENGTH and set(one) <= set(codes.CODE_ALPHABET)
    assert code_of(first).code == one and CompletionCode.objects.filter(study=mturk_study).count() == 2
    assert Recruitment.objects.get(study=mturk_study).code_completed not in (one, two)
    assert CompletionCode.objects.get(participant=first).source == "generated"


def test_pool_codes_go_once_each_and_an_empty_pool_says_so(mturk_study):
    recruitment_update(study=mturk_study, code_mode="pool")
    assert completion_pool_add(study=mturk_study, text="code\nPOOL-A\nPOOL-B\n") == 2
    first, second, third = (completer(mturk_study, f"w-{n}") for n in range(3))
    assert {code_of(first).code, code_of(second).code} == {"POOL-A", "POOL-B"}
    waiting = code_of(third)
    assert waiting.code == "" and "run out of completion codes" in waiting.message
    assert third.code in waiting.message
    assert pool_counts(mturk_study) == (0, 2)
    completion_pool_add(study=mturk_study, text="POOL-C")
    assert code_of(third).code == "POOL-C" and code_of(first).code in ("POOL-A", "POOL-B")


def test_the_hand_out_is_one_conditional_update(mturk_study):
    recruitment_update(study=mturk_study, code_mode="pool")
    completion_pool_add(study=mturk_study, text="POOL-A\nPOOL-B")
    person = completer(mturk_study, "w-1")
    with CaptureQueriesContext(connection) as captured:
        assert code_of(person).code == "POOL-A"
    updates = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("UPDATE")]
    handouts = [sql for sql in updates if "studies_completioncode" in sql]
    assert len(handouts) == 1 and '"participant_id" IS NULL' in handouts[0]


def test_a_completer_who_read_a_code_another_took_gets_the_next(mturk_study, monkeypatch):
    """The race two completers run: both read POOL-A as free; the rival's UPDATE lands first."""
    recruitment_update(study=mturk_study, code_mode="pool")
    completion_pool_add(study=mturk_study, text="POOL-A\nPOOL-B")
    rival, person = completer(mturk_study, "w-1"), completer(mturk_study, "w-2")
    read = codes.first_free_code

    def stale_read(study_id):
        free = read(study_id)
        if free is not None and free[1] == "POOL-A":
            CompletionCode.objects.filter(pk=free[0]).update(participant=rival, handed_out_at=timezone.now())
        return free

    monkeypatch.setattr(codes, "first_free_code", stale_read)
    assert code_of(person).code == "POOL-B"
    held = dict(CompletionCode.objects.values_list("code", "participant_id"))
    assert held == {"POOL-A": rival.pk, "POOL-B": person.pk}


def test_a_bad_pool_upload_is_refused_line_by_line_and_adds_nothing(mturk_study):
    found = Recruitment.objects.get(study=mturk_study)
    completion_pool_add(study=mturk_study, text="OLD-1")
    text = f"GOOD-1\nhas space\nGOOD-1\n{found.code_completed}\nOLD-1\n{'x' * 41}\n"
    with pytest.raises(RecruitmentError) as refused:
        completion_pool_add(study=mturk_study, text=text)
    assert refused.value.errors == [
        "line 2, code: 1..40 letters, digits, _ or - ('has space')",
        "line 3, code: GOOD-1 again (line 1)",
        f"line 4, code: {found.code_completed} is already this study's (the pool or a study code)",
        "line 5, code: OLD-1 is already this study's (the pool or a study code)",
        f"line 6, code: 1..40 letters, digits, _ or - ('{'x' * 41}')",
    ]
    assert list(CompletionCode.objects.values_list("code", flat=True)) == ["OLD-1"]
    with pytest.raises(RecruitmentError, match="no codes"):
        completion_pool_add(study=mturk_study, text="\n\n")


def test_prolific_keeps_one_code_per_study(panel_study):
    with pytest.raises(RecruitmentError, match="Prolific takes one code per study"):
        recruitment_update(study=panel_study, code_mode="pool")
    with pytest.raises(RecruitmentError, match="code mode"):
        recruitment_update(study=panel_study, panel="generic", code_mode="everyone")
    assert Recruitment.objects.get(study=panel_study).code_mode == "study"


def test_the_settings_page_sets_the_mode_and_fills_the_pool(client, alice, mturk_study):
    client.force_login(alice)
    found = Recruitment.objects.get(study=mturk_study)
    form = {
        "panel": "generic",
        "code_completed": found.code_completed,
        "code_screened_out": found.code_screened_out,
        "code_failed_checks": found.code_failed_checks,
        "code_mode": "pool",
        "code_pool": "P1\nP2\nP3",
        "effort_preset": "standard",
        "effort_outcome": "flagged",
    }
    response = client.post(f"/studies/{mturk_study.slug}/recruitment/", form)
    assert response.status_code == 302
    found.refresh_from_db()
    assert (found.code_mode, found.effort_outcome, found.effort_min_active_seconds) == ("pool", "flagged", 60)
    assert pool_counts(mturk_study) == (3, 0)
    assert AuditEntry.objects.filter(study=mturk_study, detail__pool_codes_added=3).exists()
    page = client.get(f"/studies/{mturk_study.slug}/recruitment/").content.decode()
    assert "Pool: 3 free, 0 handed out." in page and "(standard)" in page
    # A bad line refuses the whole form: neither the codes nor the settings change.
    refused = client.post(
        f"/studies/{mturk_study.slug}/recruitment/", {**form, "code_pool": "P4\nP 5", "effort_preset": "none"}
    )
    assert refused.status_code == 200 and "line 2, code" in refused.content.decode()
    found.refresh_from_db()
    assert pool_counts(mturk_study) == (3, 0) and found.effort_min_active_seconds == 60
