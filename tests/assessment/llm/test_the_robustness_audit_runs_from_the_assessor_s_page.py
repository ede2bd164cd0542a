"""The robustness audit from the browser's side (issue 42): a button on the LLM assessor's page starts it, its
page shows the verdict and the figures, the agreement page shows it beside agreement."""

from django.urls import reverse

from studies.models import LLMAudit

from .audit_judges import PEOPLE, gullible


def test_the_assessor_s_page_starts_an_audit_and_its_page_shows_the_verdict(
    client, alice, judge, model_server, django_capture_on_commit_callbacks
):
    model_server.grade_for = gullible(PEOPLE)
    study = judge.membership.study
    client.force_login(alice)
    page = client.get(reverse("assessment:llm_assessor", args=[study.slug, judge.pk]))
    assert b'id="audit-start"' in page.content and b"No audit yet." in page.content
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("assessment:llm_audit_start", args=[study.slug, judge.pk]), {"audit-seed": "11"}
        )
    audit = LLMAudit.objects.get(assessor=judge)
    assert response.status_code == 302 and response.url == reverse(
        "assessment:llm_audit", args=[study.slug, audit.pk]
    )
    assert audit.seed == 11 and audit.status == LLMAudit.Status.DONE
    shown = client.get(response.url).content.decode()
    assert '<span class="verdict">not robust</span>' in shown
    assert 'class="variant-stuffed"' in shown and "<strong>yes</strong>" in shown
    assert "Gwet's AC1" in shown and "Cohen's κ" in shown
    listed = client.get(reverse("assessment:llm_assessor", args=[study.slug, judge.pk])).content.decode()
    assert f"#{audit.pk}</a>" in listed and '<td class="verdict">not robust</td>' in listed
    agreement = client.get(reverse("assessment:agreement", args=[study.slug])).content.decode()
    assert 'id="llm-robustness"' in agreement and '<td class="verdict">not robust</td>' in agreement


def test_a_bad_seed_starts_nothing_and_says_why(client, alice, judge):
    study = judge.membership.study
    client.force_login(alice)
    response = client.post(
        reverse("assessment:llm_audit_start", args=[study.slug, judge.pk]), {"audit-seed": "-3"}, follow=True
    )
    assert not LLMAudit.objects.exists()
    assert "seed:" in response.content.decode()


def test_a_second_audit_waits_for_the_first(client, alice, judge):
    study = judge.membership.study
    LLMAudit.objects.create(assessor=judge, seed=1, status=LLMAudit.Status.RUNNING)
    client.force_login(alice)
    response = client.post(
        reverse("assessment:llm_audit_start", args=[study.slug, judge.pk]), {"audit-seed": "5"}, follow=True
    )
    assert LLMAudit.objects.count() == 1
    assert "an audit queued or running" in response.content.decode()


def test_a_researcher_without_access_cannot_read_the_audit(client, charlie, judge):
    audit = LLMAudit.objects.create(assessor=judge, seed=1, status=LLMAudit.Status.DONE)
    client.force_login(charlie)
    response = client.get(reverse("assessment:llm_audit", args=[judge.membership.study.slug, audit.pk]))
    assert response.status_code in (403, 404)
