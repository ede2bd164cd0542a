"""Where the results summarise questionnaires, the raw NASA-TLX and SUS scores stand beside the items: Table 1
(the questionnaire before the tasks) has a row per score, and the meta-evaluation takes each post-task
answer's score as a rating."""

import csv
import io

import numpy as np
import pytest
from django.urls import reverse

from scoring import services
from scoring.lib.instrument_scores import sus_score, tlx_raw
from studies.models import Participant, SearchSession
from studies.questionnaires.instruments import NASA_TLX, SUS

pytestmark = pytest.mark.django_db
TLX = [item["name"] for item in NASA_TLX.items]
SUS_NAMES = [item["name"] for item in SUS.items]


@pytest.fixture
def answered(constructed, django_capture_on_commit_callbacks, client):
    study = constructed.study
    study.questionnaire = list(NASA_TLX.items)
    study.post_task_questionnaire = list(SUS.items)
    study.save(update_fields=["questionnaire", "post_task_questionnaire"])
    rng = np.random.default_rng(29)
    tlx = []
    for participant in Participant.objects.filter(study=study).order_by("pk"):
        marks = [int(m) for m in rng.integers(0, 21, size=6)]
        participant.questionnaire_answers = dict(zip(TLX, marks, strict=True))
        participant.save(update_fields=["questionnaire_answers"])
        tlx.append(tlx_raw([m * 5 for m in marks]))
    for session in SearchSession.objects.filter(assignment__participant__study=study):
        session.post_task_answers = dict(
            zip(SUS_NAMES, [int(v) for v in rng.integers(1, 6, size=10)], strict=True)
        )
        session.save(update_fields=["post_task_answers"])
    with django_capture_on_commit_callbacks(execute=True):
        run = services.scoring_run_create(study=study)
    run.refresh_from_db()
    client.force_login(study.owner)
    return client, run, tlx


def test_table_1_has_the_raw_tlx_of_each_participant(answered):
    client, run, tlx = answered
    url = reverse("scoring:chart_csv", args=[run.study.slug, run.pk, "participants"])
    rows = {r[0]: r for r in csv.reader(io.StringIO(client.get(url).content.decode()))}
    row = rows["Raw NASA-TLX (0-100)"]
    assert float(row[1]) == pytest.approx(np.mean(tlx)) and int(row[3]) == len(tlx)
    assert float(row[2]) == pytest.approx(np.std(tlx, ddof=1))


def test_the_sus_score_is_a_rating_of_the_meta_evaluation(answered):
    client, run, _tlx = answered
    page = client.get(reverse("scoring:meta_evaluation", args=[run.study.slug, run.pk])).content.decode()
    assert 'id="rating-score.sus"' in page and "SUS score (0-100)" in page
    url = reverse("scoring:chart_csv", args=[run.study.slug, run.pk, "meta-rankings"])
    rows = list(csv.reader(io.StringIO(client.get(url).content.decode())))
    assert any(r[1] == "rating: score.sus" for r in rows[1:])
    # The rating is each session's score from its answers.
    session = SearchSession.objects.filter(assignment__participant__study=run.study).first()
    assert sus_score([session.post_task_answers[n] for n in SUS_NAMES]) is not None
