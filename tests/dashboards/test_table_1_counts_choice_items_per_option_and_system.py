"""Table 1 summarises choice items besides the numeric ones: gender and education as counts and
percents per option, over the population's participants and per system (arm) they were assigned, with any
other answer given (an "other") after the questionnaire's options."""

import csv
import io

import pytest
from django.urls import reverse

from scoring.dashboards import charts
from studies.models import ParticipantState
from studies.participation.recruitment.states import participant_state_set

pytestmark = pytest.mark.django_db

QUESTIONNAIRE = [
    {"name": "age", "label": "Age", "kind": "integer", "min": 18, "max": 99},
    {"name": "gender", "label": "Gender", "kind": "choice", "choices": ["woman", "man", "non-binary"]},
    {"name": "education", "label": "Education", "kind": "choice", "choices": ["school", "BSc", "MSc", "PhD"]},
    {"name": "comment", "label": "Anything else?", "kind": "text"},
]
GENDERS = ["woman", "woman", "man", "woman", "man", "non-binary", "woman", "man"]
EDUCATION = ["BSc", "MSc", "MSc", "PhD", "BSc", "MSc", "school", "MSc"]


def test_a_choice_item_has_a_row_per_option_with_count_and_percent_per_arm():
    answers = [
        {"gender": "woman", "age": 30},
        {"gender": "woman", "age": 40},
        {"gender": "man", "age": 50},
        {"gender": "prefer to self-describe", "age": 20},
        {"age": 60},  # did not answer the choice
    ]
    arms = [("A",), ("B",), ("A",), ("A",), ("B",)]  # a between-subjects design: one system each
    items = QUESTIONNAIRE[:2]
    table = charts.participants_table(answers, items, arms, ["A", "B"], names={"A": "Alpha"})
    rows = {(r[0], r[4], r[7]): r for r in table.rows}
    assert table.header == ["feature", "mean", "sd", "n", "option", "count", "percent", "group"]
    assert rows[("Age", "", "all")][1:4] == [40.0, pytest.approx(15.811388), 5]
    assert rows[("Age", "", "A")][1] == pytest.approx(100 / 3)
    assert rows[("Gender", "woman", "all")][3:7] == [4, "woman", 2, 50.0]
    assert rows[("Gender", "man", "all")][5:7] == [1, 25.0]
    assert rows[("Gender", "non-binary", "all")][5:7] == [0, 0.0]
    assert rows[("Gender", "prefer to self-describe", "all")][5:7] == [1, 25.0]  # the "other" answer
    assert rows[("Gender", "woman", "A")][3:7] == [3, "woman", 1, pytest.approx(100 / 3)]
    assert rows[("Gender", "woman", "B")][3:7] == [1, "woman", 1, 100.0]
    columns = table.figure["data"][0]["cells"]["values"]
    shown = dict(zip(columns[0], columns[1], strict=True))
    assert shown["Gender: woman"] == "2 (50.0%)" and shown["Age"] == "40.0 ± 15.8 (n = 5)"
    assert table.figure["data"][0]["header"]["values"] == [
        "Feature",
        "All (N = 5)",
        "A: Alpha (n = 3)",
        "B (n = 2)",
    ]


def test_the_dashboards_table_1_counts_gender_and_education_in_the_population(client, scored):
    built, run = scored
    study = built.study
    study.questionnaire = QUESTIONNAIRE
    study.save(update_fields=["questionnaire"])
    for participant, gender, education in zip(
        study.participants.order_by("enrolment_index"), GENDERS, EDUCATION, strict=True
    ):
        participant.questionnaire_answers = {
            "age": 20 + participant.enrolment_index,
            "gender": gender,
            "education": education,
        }
        participant.save(update_fields=["questionnaire_answers"])
        state = ParticipantState.WITHDRAWN if participant.code == "P008" else ParticipantState.COMPLETED
        participant_state_set(participant=participant, state=state)
    client.force_login(study.owner)

    def table(**query):
        url = reverse("scoring:chart_csv", args=[study.slug, run.pk, "participants"])
        header, *rows = list(csv.reader(io.StringIO(client.get(url, query).content.decode())))
        return {(r[0], r[4], r[7]): dict(zip(header, r, strict=True)) for r in rows}

    itt = table(population="itt")
    assert itt[("Gender", "woman", "all")]["count"] == "4" and itt[("Gender", "woman", "all")]["n"] == "8"
    assert itt[("Gender", "man", "all")]["percent"] == "37.5"
    assert itt[("Education", "MSc", "all")]["count"] == "4"
    # Every participant of the paper's design used both systems: each system's column is everyone.
    assert itt[("Education", "MSc", "A")]["count"] == itt[("Education", "MSc", "B")]["count"] == "4"
    assert not any(key[0] == "Anything else?" for key in itt)  # free text is not summarised
    completers = table(population="completers")  # P008 (a man with an MSc) withdrew
    assert (
        completers[("Gender", "man", "all")]["count"] == "2"
        and completers[("Gender", "man", "all")]["n"] == "7"
    )
    assert completers[("Education", "MSc", "all")]["count"] == "3"
    payload = client.get(
        reverse("scoring:chart_json", args=[study.slug, run.pk, "participants"]), {"population": "completers"}
    ).json()
    features = payload["figure"]["data"][0]["cells"]["values"][0]
    assert "Gender: woman" in features and "Education: PhD" in features
    assert "Participant features (N = 7)" in payload["figure"]["layout"]["title"]["text"]
