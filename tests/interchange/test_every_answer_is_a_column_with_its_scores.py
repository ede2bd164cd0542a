"""sessions.csv: a column per item of the questions before and after each task, a choice's other text in its
own column, and the raw NASA-TLX and SUS scores of each answer (studies/interchange/answer_columns.py)."""

import csv
import io

from studies.interchange.answer_columns import answer_cells, questionnaire_columns
from studies.interchange.tidy_csv import table_csv, table_rows
from studies.models import SearchSession
from studies.questionnaires.instruments import NASA_TLX, SUS

CHOICE = {"name": "engine", "label": "Engine", "kind": "choice", "choices": ["A", "B"], "other": True}
FAMILIARITY = {"name": "familiarity", "label": "Familiar?", "kind": "scale", "min": 1, "max": 5}
# Brooke's sample form (SUS 55), and TLX marks whose ratings average 280 / 6.
SUS_ANSWERS = dict(zip([f"sus_{n}" for n in range(1, 11)], [5, 4, 2, 1, 2, 3, 2, 4, 5, 2], strict=True))
TLX_ANSWERS = dict(zip([i["name"] for i in NASA_TLX.items], [14, 4, 11, 6, 13, 8], strict=True))


def rows_of(study):
    text = table_csv(table_rows(study=study, name="sessions"))
    return list(csv.DictReader(io.StringIO(text)))


def test_each_item_its_other_text_and_the_scores_are_columns(worked_study):
    worked_study.pre_task_questionnaire = [FAMILIARITY]
    worked_study.post_task_questionnaire = [CHOICE, *NASA_TLX.items, *SUS.items]
    worked_study.save(update_fields=["pre_task_questionnaire", "post_task_questionnaire"])
    first, second = SearchSession.objects.filter(assignment__participant__study=worked_study).order_by(
        "assignment__position"
    )
    first.post_task_answers = {"engine": "other", "engine.other": "my own", **TLX_ANSWERS, **SUS_ANSWERS}
    first.save(update_fields=["post_task_answers"])
    first.assignment.pre_task_answers = {"familiarity": 2}
    first.assignment.save(update_fields=["pre_task_answers"])
    second.post_task_answers = {"engine": "B", **SUS_ANSWERS, "sus_10": None}
    second.save(update_fields=["post_task_answers"])

    rows = rows_of(worked_study)
    header = list(rows[0])
    assert header[-21:] == [
        "pre_task.familiarity",
        "post_task.engine",
        "post_task.engine.other",
        *[f"post_task.{i['name']}" for i in NASA_TLX.items],
        *[f"post_task.sus_{n}" for n in range(1, 11)],
        "post_task.score.tlx_raw",
        "post_task.score.sus",
    ]
    one, two = rows
    assert one["pre_task.familiarity"] == "2" and two["pre_task.familiarity"] == ""
    assert (one["post_task.engine"], one["post_task.engine.other"]) == ("other", "my own")
    assert (two["post_task.engine"], two["post_task.engine.other"]) == ("B", "")
    assert one["post_task.tlx_mental"] == "14" and one["post_task.sus_1"] == "5"
    assert float(one["post_task.score.tlx_raw"]) == round(280 / 6, 4)
    assert one["post_task.score.sus"] == "55.0"
    # An answer without every item of an instrument has no score rather than a made-up one.
    assert two["post_task.score.sus"] == "" and two["post_task.score.tlx_raw"] == ""
    # The JSON cells stay, for scripts that read them.
    assert '"engine.other":"my own"' in one["post_task_answers"]


def test_the_default_post_task_item_is_a_column_too(worked_study):
    rows = rows_of(worked_study)
    assert "post_task.search_went_well" in rows[0]
    assert not any(column.startswith("pre_task.") for column in rows[0])


def test_another_table_can_reuse_the_columns():
    # A participants table's demographics: the same two functions, no prefix.
    items = [CHOICE, FAMILIARITY]
    assert questionnaire_columns(items) == ["engine", "engine.other", "familiarity"]
    assert answer_cells(items, {"engine": "A", "familiarity": 5}) == ["A", "", 5]
    assert answer_cells(items, None) == ["", "", ""]
