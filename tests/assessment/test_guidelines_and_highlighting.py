"""What an assessor sees: the guidelines (the study's, then the scenario's, escaped, with
paragraphs and line breaks) above the document, and the query terms marked in the document's title and
text, safely; the assessor can switch highlighting off, and it stays off for them."""

import pytest
from django.urls import reverse

from studies.assessment import assessor_work, assessors, pools
from studies.assessment.highlighting import highlight_terms, highlighted
from studies.errors import AssessmentError
from studies.models import AssessmentGuidelines, AuditAction, CollectionTopic, Document, Query


def test_highlighting_escapes_the_text_and_marks_whole_words_in_any_case():
    terms = highlight_terms(["Solar energy"])
    html = highlighted("<b>SOLAR</b> & solaris; solar-energy", terms)
    assert html == (
        "&lt;b&gt;<mark>SOLAR</mark>&lt;/b&gt; &amp; solaris; <mark>solar</mark>-<mark>energy</mark>"
    )


def test_highlighting_never_marks_inside_the_escaping():
    # "amp", "lt" and "quot" are terms here; the entities the escaping writes must stay whole.
    html = highlighted('a & b < c "d"', frozenset({"amp", "lt", "quot", "b"}))
    assert html == "a &amp; <mark>b</mark> &lt; c &quot;d&quot;"


def test_the_terms_leave_out_stopwords_and_single_characters():
    assert highlight_terms(["The history of a war in Europe"]) == {"history", "war", "europe"}


@pytest.fixture
def judging(assessed_study, make_assessors):
    study = assessed_study
    scenario = study.scenarios.get(code="S1")
    scenario.title = "Solar energy"
    scenario.save(update_fields=["title"])
    Document.objects.filter(collection=study.collection, external_id="d1").update(
        title="Solar <script>alert(1)</script> panels", text="Cheap SOLAR power.\n\nWind turbine energy too."
    )
    pools.pool_add_documents(scenario=scenario, external_ids=["d1"], added_by=study.owner)
    (ann,) = make_assessors(study, "ann")
    return study, scenario, ann


def form(client, study, code="S1"):
    return client.get(reverse("assessment:assessor_form", args=[study.slug, code])).content.decode()


def test_guidelines_are_kept_as_written_and_audited(judging, alice):
    study, scenario, _ann = judging
    assessor_work.guidelines_set(study=study, scenario=None, text="  Grade 3: <b>key</b>\n", by=alice)
    assessor_work.guidelines_set(study=study, scenario=None, text="Grade 3: key", by=alice)
    assert AssessmentGuidelines.objects.get(study=study, scenario=None).text == "Grade 3: key"
    entries = study.audit_entries.filter(action=AuditAction.GUIDELINES_CHANGED).order_by("id")
    assert [e.detail["old_text"] for e in entries] == ["", "  Grade 3: <b>key</b>\n"]
    # the same text again changes nothing
    assessor_work.guidelines_set(study=study, scenario=None, text="Grade 3: key", by=alice)
    assert entries.count() == 2


def test_another_studys_scenario_is_refused(judging, alice, django_user_model):
    study, scenario, _ann = judging
    from tests.factories import study_designed

    other = study_designed(study.__class__.objects.create(name="Other", slug="other", owner=alice))
    with pytest.raises(AssessmentError, match="not this study's"):
        assessor_work.guidelines_set(study=other, scenario=scenario, text="x", by=alice)
    assert not AssessmentGuidelines.objects.exists()


def test_the_form_shows_the_studys_then_the_scenarios_guidelines_escaped(client, judging, alice):
    study, scenario, ann = judging
    client.force_login(alice)
    url = reverse("assessment:guidelines", args=[study.slug])
    client.post(url, {"scenario": "", "text": "Relevant means <useful>.\nReally.\n\nSecond paragraph."})
    client.post(url, {"scenario": "S1", "text": "Only solar counts."})
    client.force_login(ann)
    page = form(client, study)
    study_part = "<p>Relevant means &lt;useful&gt;.<br>Really.</p>\n\n<p>Second paragraph.</p>"
    assert study_part in page
    assert page.index(study_part) < page.index("Only solar counts.") < page.index('id="document-title"')
    assert "Guidelines for S1" in page
    # another scenario's form shows only the study's
    pools.pool_add_documents(scenario=study.scenarios.get(code="S2"), external_ids=["d2"], added_by=alice)
    assert "Only solar counts." not in form(client, study, "S2")


def test_an_unknown_scenario_in_the_guidelines_form_changes_nothing(client, judging, alice):
    study, _scenario, _ann = judging
    client.force_login(alice)
    response = client.post(
        reverse("assessment:guidelines", args=[study.slug]), {"scenario": "S9", "text": "x"}, follow=True
    )
    assert "no scenario &#x27;S9&#x27; in this study" in response.content.decode()
    assert not AssessmentGuidelines.objects.exists()


def test_the_form_marks_the_topics_terms_in_the_title_and_text(client, judging):
    study, _scenario, ann = judging
    client.force_login(ann)
    page = form(client, study)
    assert "<mark>Solar</mark> &lt;script&gt;alert(1)&lt;/script&gt; panels" in page
    assert "<p>Cheap <mark>SOLAR</mark> power.</p>" in page
    assert "Wind turbine <mark>energy</mark> too." in page
    assert "<script>alert(1)" not in page


def test_the_assessor_switches_highlighting_off_and_it_stays_off(client, judging):
    study, _scenario, ann = judging
    client.force_login(ann)
    url = reverse("assessment:assessor_form", args=[study.slug, "S1"])
    pd = study.scenarios.get(code="S1").assessment_pool.documents.get()
    response = client.post(url, {"highlighting": "off", "doc": str(pd.id)})
    assert response.status_code == 302 and response["Location"] == f"{url}?doc={pd.id}"
    page = form(client, study)
    assert "<mark>" not in page and "Cheap SOLAR power." in page
    assert 'value="on">Highlight query terms' in page
    client.post(url, {"highlighting": "on"})
    assert "<mark>" in form(client, study)


def test_participants_queries_are_marked_only_when_the_plan_says_so(client, judging):
    study, scenario, ann = judging
    participant = study.participants.order_by("enrolment_index").first()
    assignment = participant.assignments.get(scenario=scenario)
    from django.utils import timezone

    from studies.models import SearchSession

    session = SearchSession.objects.create(assignment=assignment, started_at=timezone.now())
    Query.objects.create(session=session, position=1, text="wind turbine", issued_at=timezone.now())
    client.force_login(ann)
    assert "<mark>Wind</mark>" not in form(client, study)
    assessors.assessment_plan_set(study=study, assessors_per_document=1, highlight_participant_queries=True)
    page = form(client, study)
    assert "<mark>Wind</mark> <mark>turbine</mark>" in page


def test_the_topics_title_in_the_collections_topics_is_marked_too(client, judging):
    study, scenario, ann = judging
    CollectionTopic.objects.create(
        collection=study.collection, topic_id=scenario.topic_id, title="wind power"
    )
    client.force_login(ann)
    page = form(client, study)
    assert "<mark>Wind</mark> turbine" in page and "Cheap <mark>SOLAR</mark> <mark>power</mark>." in page
