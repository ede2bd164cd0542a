"""Publishing with a machine rule from the assessment page: the preview says what the rule does,
the version list shows each version's provenance and links the conclusion-change page, and the API's
reference versions carry the provenance read-only."""

import pytest
from django.urls import reverse

from studies.assessment import adjudication, references
from tests.interchange.api_helpers import client_for

from .conftest import grade_all
from .machine_factories import machine_assessor_make, machine_grades_give, machine_words


@pytest.fixture
def judged(assessed_study, make_assessors, alice):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d1": [2, 2], "d2": [1, 3], "d5": [None, None]}, [ann, ben])
    adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    llm = machine_assessor_make(assessed_study)
    machine_grades_give(llm, {"d1": 0, "d2": 3, "d5": 1})
    return assessed_study, llm


def test_publishing_with_rules_from_the_page_records_and_shows_the_provenance(judged, client, alice):
    study, llm = judged
    client.force_login(alice)
    url = reverse("assessment:publish", args=[study.slug])
    choices = {
        "publish-mode": "merge",
        "publish-rules": ["fill_unjudged", "break_ties"],
        "publish-machine": llm.pk,
    }
    preview = client.get(url, choices)
    assert preview.status_code == 200
    text = preview.content.decode()
    assert "Machine assessor llm-judge" in text and "1 unjudged documents filled" in text
    assert "1 undecided disagreements settled" in text
    digest = preview.context["plan"].digest
    response = client.post(url, {**choices, "publish-digest": digest})
    assert response.status_code == 302
    version = study.reference_versions.get()
    assert version.facts["machine_rules"] == ["fill_unjudged", "break_ties"]
    assert (version.facts["documents_filled"], version.facts["ties_broken"]) == (1, 1)
    page = client.get(reverse("assessment:manage", args=[study.slug])).content.decode()
    assert f"{machine_words(llm)}: 1 document filled; 1 tie broken" in page
    assert reverse("scoring:reference_change", args=[study.slug]) + "?to=1" in page


def test_with_no_rule_ticked_the_preview_says_no_machine_grade_enters(judged, client, alice):
    study, llm = judged
    client.force_login(alice)
    url = reverse("assessment:publish", args=[study.slug])
    choices = {"publish-machine": llm.pk, "publish-allow_pending": "on"}
    preview = client.get(url, choices)
    assert "No machine assessor's grade enters this version" in preview.content.decode()
    client.post(url, {**choices, "publish-digest": preview.context["plan"].digest})
    version = study.reference_versions.get()
    assert version.facts == {} and not version.judgments.filter(judged_by=llm.user).exists()
    page = client.get(reverse("assessment:manage", args=[study.slug])).content.decode()
    assert "people's grades and imports only" in page and "how the conclusion changes" not in page


def test_a_rule_without_a_machine_is_refused_by_the_form(judged, client, alice):
    study, _llm = judged
    client.force_login(alice)
    response = client.get(
        reverse("assessment:publish", args=[study.slug]), {"publish-rules": "break_ties"}, follow=True
    )
    assert "choose the machine assessor" in response.content.decode()
    assert not study.reference_versions.exists()


def test_the_api_lists_each_versions_provenance(judged, alice):
    study, llm = judged
    references.reference_version_publish(study=study, created_by=alice, allow_pending=True)
    references.reference_version_publish(study=study, created_by=alice, machine=llm, rules=["break_ties"])
    body = client_for(alice).get(f"/api/studies/{study.pk}/reference-versions/").json()
    by_number = {row["number"]: row["provenance"] for row in body["results"]}
    assert by_number[1] == {}
    assert by_number[2]["machine_rules"] == ["break_ties"] and by_number[2]["ties_broken"] == 1
    assert by_number[2]["machine_assessor"]["assessor"] == "llm-judge"


def test_the_agreement_page_and_the_downloads_show_the_provenance_too(judged, client, alice):
    study, llm = judged
    references.reference_version_publish(study=study, created_by=alice, machine=llm, rules=["break_ties"])
    client.force_login(alice)
    words = f"{machine_words(llm)}: 1 tie broken"
    assert words in client.get(reverse("assessment:agreement", args=[study.slug])).content.decode()
    assert words in client.get(reverse("exports:downloads", args=[study.slug])).content.decode()


def test_without_a_machine_assessor_the_publish_form_has_no_rules(assessed_study, client, alice):
    client.force_login(alice)
    manage = client.get(reverse("assessment:manage", args=[assessed_study.slug])).content.decode()
    assert "publish-rules" not in manage and "publish-machine" not in manage
