"""A run's status is one text on its page, the runs list and the status JSON: a done run with new data waiting
says it is updating (never "Done" beside "being scored"), and its page follows it until the update is done;
a current one says "Done". The text is decided when read (scoring/freshness.py), never from ScoringRun.stale,
the re-score queue's mark: a mark left on a current run says "Done"."""

import pytest
from django.urls import reverse

from scoring.freshness import UPDATING_TEXT
from scoring.models import ScoringRun
from studies.models import ReferenceVersion

pytestmark = pytest.mark.django_db

UPDATING = UPDATING_TEXT


@pytest.fixture
def pages(client, scored):
    built, run = scored
    client.force_login(built.study.owner)
    slug = built.study.slug

    def read():
        return (
            client.get(reverse("scoring:run_detail", args=[slug, run.pk])).content.decode(),
            client.get(reverse("scoring:runs", args=[slug])).content.decode(),
            client.get(reverse("scoring:run_status", args=[slug, run.pk])).json(),
        )

    return run, read


def test_a_current_run_says_done_everywhere(pages):
    run, read = pages
    page, runs, status = read()
    assert '<span class="status-text">Done</span>' in page and 'data-finished="1"' in page
    assert '<td class="run-status-text">Done: ' in runs
    assert (status["status_text"], status["finished"]) == ("Done", True)
    assert "being scored" not in page + runs and UPDATING not in page + runs


def test_a_run_with_new_data_waiting_says_it_is_updating_and_is_followed(pages):
    run, read = pages
    ReferenceVersion.objects.create(study=run.study, number=2)  # new data; no hook has marked the run
    page, runs, status = read()
    assert f'<span class="status-text">{UPDATING}</span>' in page
    assert 'data-finished="0"' in page  # charts.js polls it and reloads once the update is done
    assert f'<td class="run-status-text">{UPDATING}: ' in runs
    assert (status["status"], status["status_text"], status["finished"]) == ("done", UPDATING, False)
    for html in (page, runs):
        assert ">Done<" not in html and "Done:" not in html and "re-scoring)" not in html


def test_a_mark_left_on_a_current_run_says_done(pages):
    run, read = pages
    ScoringRun.objects.filter(pk=run.pk).update(stale=True)  # the queue's mark, not the truth
    page, runs, status = read()
    assert '<span class="status-text">Done</span>' in page and 'data-finished="1"' in page
    assert (status["status_text"], status["finished"]) == ("Done", True)
