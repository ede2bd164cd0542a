"""A study made without its collection's judgments (the New-study form's, before the fix) is
repaired from its page (the owner's POST) or by `manage.py repair_reference`; the set-up checklist says the
collection step is done only once the version exists. Repairing twice does nothing the second time."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from studies.assessment.references import reference_version_import_qrels
from studies.design import services
from studies.design.checklist import study_checklist
from tests.setup.test_a_study_attaches_a_collection_from_its_page import with_topics

pytestmark = pytest.mark.django_db


@pytest.fixture
def unrepaired(alice):
    """A study built on the collection as the form built it before it took the collection's judgments: no
    reference version."""
    return services.study_create(owner=alice, name="Made on the form", collection=with_topics(alice))


def collection_step(study):
    return next(step for step in study_checklist(study=study) if step.key == "collection")


def test_the_checklist_is_false_before_the_repair_and_true_after(client, alice, unrepaired):
    step = collection_step(unrepaired)
    assert not step.done
    assert step.missing == [
        "The collection's 2 judgments are not the study's reference yet: add them from the study page "
        "(or manage.py repair_reference)."
    ]
    client.force_login(alice)
    page = client.get(f"/studies/{unrepaired.slug}/").content.decode()
    assert 'id="collection-reference"' in page and "Add them as a reference version" in page

    answer = client.post(f"/collections/for-study/{unrepaired.slug}/reference/", follow=True)
    assert "Reference version 1 made: the 2 judgments of “Docs”." in answer.content.decode()
    version = unrepaired.reference_versions.get()
    assert version.judgments.count() == 2 and version.created_by == alice
    assert collection_step(unrepaired).done
    assert 'id="collection-reference"' not in client.get(f"/studies/{unrepaired.slug}/").content.decode()


def test_the_button_does_nothing_the_second_time_and_says_so(client, alice, unrepaired):
    client.force_login(alice)
    client.post(f"/collections/for-study/{unrepaired.slug}/reference/")
    again = client.post(f"/collections/for-study/{unrepaired.slug}/reference/", follow=True)
    assert (
        "Nothing done: reference version 1 already holds the judgments of “Docs”." in again.content.decode()
    )
    assert unrepaired.reference_versions.count() == 1


def test_only_the_owner_repairs(client, bob, unrepaired):
    unrepaired.researchers.add(bob)  # he sees the study, and is not its owner
    client.force_login(bob)
    assert client.post(f"/collections/for-study/{unrepaired.slug}/reference/").status_code == 403
    assert (
        "Add them as a reference version" not in client.get(f"/studies/{unrepaired.slug}/").content.decode()
    )
    assert not unrepaired.reference_versions.exists()


def test_a_study_assessed_meanwhile_keeps_its_grades_over_the_collection_s(alice, unrepaired):
    reference_version_import_qrels(
        study=unrepaired, lines=["1 0 d1 1"], path="expert.qrels", created_by=alice, note="expert"
    )
    assert not collection_step(unrepaired).done
    out = StringIO()
    call_command("repair_reference", "--study", str(unrepaired.pk), stdout=out)
    assert "Reference version 2 made: the 2 judgments of “Docs”, with the 1 judgment of version 1" in (
        out.getvalue()
    )
    version = unrepaired.reference_versions.get(number=2)
    assert sorted(version.judgments.values_list("document__external_id", "grade")) == [("d1", 1), ("d2", 0)]
    assert collection_step(unrepaired).done


def test_the_command_repairs_every_study_once(alice, unrepaired, study):
    out = StringIO()
    call_command("repair_reference", "--all", stdout=out)
    assert out.getvalue().splitlines()[-1] == "1 of 1 studies given their collection's judgments."
    out = StringIO()
    call_command("repair_reference", "--all", stdout=out)
    assert out.getvalue().splitlines()[-1] == "0 of 1 studies given their collection's judgments."
    assert unrepaired.reference_versions.count() == 1


def test_the_command_names_a_study_it_does_not_know(unrepaired):
    with pytest.raises(CommandError, match="--study: no study '999'"):
        call_command("repair_reference", "--study", "999")
