"""The database keeps a negative reference grade as judged (-9..-1) but not one below -9, and a participant's
judgment stays inside the study's scale (triggers of migrations 0002 and 0006)."""

import pytest
from django.db import IntegrityError, transaction

from studies.models import Collection, Document, ReferenceJudgment, ReferenceVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def version_and_document(study):
    collection = Collection.objects.create(name="c")
    document = Document.objects.create(collection=collection, external_id="d1", title="d1")
    return ReferenceVersion.objects.create(study=study, number=1), document


@pytest.mark.parametrize("grade", [-1, -2, -9, 0, 3])
def test_a_reference_grade_of_the_scale_or_negative_is_stored(version_and_document, grade):
    version, document = version_and_document
    ReferenceJudgment.objects.create(version=version, topic_id="1", document=document, grade=grade)
    assert ReferenceJudgment.objects.get(version=version).grade == grade


@pytest.mark.parametrize("grade", [-10, 4, 9])
def test_a_reference_grade_below_minus_9_or_above_the_scale_is_refused(version_and_document, grade):
    version, document = version_and_document
    with pytest.raises(IntegrityError, match="outside the study's grade scale"), transaction.atomic():
        ReferenceJudgment.objects.create(version=version, topic_id="1", document=document, grade=grade)
