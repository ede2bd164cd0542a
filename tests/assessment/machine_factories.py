"""A machine assessor made directly, without the LLM runs: an account that cannot log in, a
StudyAssessor membership and an LLMAssessor row on it, and its grades as AssessorJudgment rows. For any test
that needs a machine's grades beside the people's."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.utils import timezone

from studies.models import AssessorJudgment, LLMAssessor, Study, StudyAssessor


def machine_assessor_make(
    study: Study, name: str = "llm-judge", *, model: str = "test-model"
) -> StudyAssessor:
    """A machine assessor of `study` (its membership, with `.llm`)."""
    user = get_user_model().objects.create_user(username=name)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    membership = StudyAssessor.objects.create(study=study, user=user, invited_by=study.owner)
    LLMAssessor.objects.create(
        membership=membership, endpoint_url="http://127.0.0.1:9/v1", model_name=model, created_by=study.owner
    )
    return StudyAssessor.objects.select_related("user", "llm").get(pk=membership.pk)


def machine_grades_give(machine: StudyAssessor, grades: dict[str, int], code: str = "S1") -> None:
    """The machine's grade of each pooled document of scenario `code` ({external_id: grade})."""
    pool = machine.study.scenarios.get(code=code).assessment_pool
    now = timezone.now()
    AssessorJudgment.objects.bulk_create(
        AssessorJudgment(
            pool_document=pool.documents.get(document__external_id=external_id),
            assessor=machine.user,
            grade=grade,
            created_at=now,
            updated_at=now,
        )
        for external_id, grade in grades.items()
    )


def machine_words(machine: StudyAssessor) -> str:
    """How a version's provenance names `machine` in words (ReferenceVersion.provenance_text): its user name,
    model, the first 12 characters of its prompt hash, and that it was never audited for robustness (these
    tests run none)."""
    from studies.assessment.llm.prompts import prompt_hash

    llm = machine.llm
    return (
        f"machine grades by {machine.user.get_username()}, model {llm.model_name}, "
        f"prompt {prompt_hash(llm.prompt_template, llm.model_name)[:12]}, never audited for robustness"
    )
