"""A study's assessment data goes with the study; the assessor accounts and the documents stay."""

from studies.assessment import adjudication, references
from studies.models import AdjudicationDecision, AssessorJudgment, Document, PoolDocument, StudyAssessor

from .conftest import grade_all


def test_deleting_a_study_deletes_its_pools_judgments_and_decisions(assessed_study, alice, make_assessors):
    ann, ben = make_assessors(assessed_study, "ann", "ben", per_document=2)
    grade_all(assessed_study, {"d1": [1, 1], "d2": [0, 1]}, [ann, ben])
    adjudication.adjudicate(study=assessed_study, preset="2002", decided_by=alice)
    references.reference_version_publish(study=assessed_study, created_by=alice)
    assessed_study.delete()
    assert not PoolDocument.objects.exists() and not AssessorJudgment.objects.exists()
    assert not AdjudicationDecision.objects.exists() and not StudyAssessor.objects.exists()
    assert Document.objects.count() == 12
    ann.refresh_from_db()
