"""Expert assessment: the pools of documents experts judge, who judges what, and how disagreements end.

The paper's reference standard: "all documents judged relevant by at least one user were judged by an
independent domain expert" (Järvelin et al. 2008, section 3.1); the 2002 study had four assessors and a rule
for their disagreements (Järvelin & Kekäläinen 2002, section 3.1). See docs/assessing.md.

Grades inside the study's scale and assessors being members of the study are enforced by triggers
(migration 0003_assessment), like the rules of 0002. Writes go through studies/assessment/ (pools, assessors,
adjudication, references).
"""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def new_order_seed() -> str:
    return secrets.token_hex(8)


class AssessmentPlan(models.Model):
    """A study's assessment settings: how many assessors judge each pool document, and with one, the share
    of each scenario's pool documents that get a second assessor for agreement; whether the assessor's form
    also highlights the queries participants issued. The issue-30 fields are nullable without a default
    (SQLite adds them in place): empty reads as 0 and off."""

    study = models.OneToOneField("studies.Study", on_delete=models.CASCADE, related_name="assessment_plan")
    assessors_per_document = models.PositiveSmallIntegerField(default=1)
    double_judged_percent = models.PositiveSmallIntegerField(null=True, blank=True)
    highlight_participant_queries = models.BooleanField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(assessors_per_document__gte=1), name="plan_assessors_at_least_1"
            ),
        ]

    def __str__(self):
        return f"{self.study}: {self.assessors_per_document} assessor(s) per document"


class AssessmentPool(models.Model):
    """The documents of one scenario that experts judge, and the rule that put them there."""

    class Rule(models.TextChoices):
        RELEVANT = "relevant", "Judged relevant (grade >= 1) by a participant"
        TOP_X = "top_x", "Shown in the top X of any query"
        UNION = "union", "Both: judged relevant or shown in the top X"

    scenario = models.OneToOneField(
        "studies.Scenario", on_delete=models.CASCADE, related_name="assessment_pool"
    )
    rule = models.CharField(max_length=20, choices=Rule.choices, default=Rule.RELEVANT)
    top_x = models.PositiveIntegerField(
        default=10, help_text="X of the top-X rule (ignored by the relevant rule)."
    )
    built_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(rule__in=["relevant", "top_x", "union"]), name="pool_rule_known"
            ),
            models.CheckConstraint(condition=Q(top_x__gte=1), name="pool_top_x_at_least_1"),
        ]

    def __str__(self):
        return f"pool of {self.scenario}"


class PoolDocument(models.Model):
    class Source(models.TextChoices):
        RULE = "rule", "Pool rule"
        MANUAL = "manual", "Added by hand"
        QRELS = "qrels", "Imported qrels"

    pool = models.ForeignKey(AssessmentPool, on_delete=models.CASCADE, related_name="documents")
    document = models.ForeignKey("studies.Document", on_delete=models.PROTECT, related_name="+")
    source = models.CharField(max_length=20, choices=Source.choices)
    # Why it is in the pool: "relevant", "top 10", "added by alice", "team.qrels:12".
    source_detail = models.CharField(max_length=300, blank=True)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "id"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "document"], name="pool_document_once"),
            models.CheckConstraint(
                condition=Q(source__in=["rule", "manual", "qrels"]), name="pool_document_source_known"
            ),
        ]

    def __str__(self):
        return f"{self.document} in {self.pool}"


# The filter of StudyAssessor rows that keeps people: a machine assessor's membership has its LLMAssessor
# (related name llm).
ASSESSORS_WHO_ARE_PEOPLE = Q(llm__isnull=True)


class StudyAssessor(models.Model):
    """An assessor's membership of one study. Assessors are accounts without is_staff; they see only the
    studies they hold a membership of.

    A machine assessor (an LLMAssessor holds the membership) is a membership too, of an account
    that cannot log in, so its grades are AssessorJudgment rows that agreement reads beside the humans'. It is
    never dealt documents by the plan and never counted by adjudication: its grades reach a reference only
    by an explicit rule. `StudyAssessor.people` selects the others."""

    study = models.ForeignKey("studies.Study", on_delete=models.CASCADE, related_name="assessors")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assessor_memberships"
    )
    # Seeds this assessor's shuffled document order: stable across visits, different between assessors.
    order_seed = models.CharField(max_length=32, default=new_order_seed, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    invited_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="study_assessor_once"),
        ]

    def __str__(self):
        return f"{self.user} assesses {self.study}"

    @property
    def is_machine(self) -> bool:
        return hasattr(self, "llm")


class AssessorInvitation(models.Model):
    """A researcher asked an assessor of another lab to assess a study; the membership (StudyAssessor) exists
    only once the assessor accepts (studies.assessment.assessors.assessor_add decides who must be asked)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the assessor"
        ACCEPTED = "accepted", "Accepted"
        DECLINED = "declined", "Declined"

    study = models.ForeignKey("studies.Study", on_delete=models.CASCADE, related_name="assessor_invitations")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assessor_invitations"
    )
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    invited_at = models.DateTimeField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-invited_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="assessor_invitation_once"),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "accepted", "declined"]),
                name="assessor_invitation_status_known",
            ),
            models.CheckConstraint(
                condition=Q(status="pending", answered_at__isnull=True)
                | (~Q(status="pending") & Q(answered_at__isnull=False)),
                name="assessor_invitation_answer_has_time",
            ),
        ]

    def __str__(self):
        return f"{self.user} invited to assess {self.study} ({self.status})"


class AssessorAssignment(models.Model):
    """This assessor is to judge this pool document (allocated once, so a grown pool keeps old work)."""

    assessor = models.ForeignKey(StudyAssessor, on_delete=models.CASCADE, related_name="assignments")
    pool_document = models.ForeignKey(
        PoolDocument, on_delete=models.CASCADE, related_name="assessor_assignments"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assessor", "pool_document"], name="assessor_assignment_once"),
        ]

    def __str__(self):
        return f"{self.assessor.user} judges {self.pool_document}"


class AssessorJudgment(models.Model):
    """An assessor's grade of a pool document; never shown to other assessors or to participants."""

    pool_document = models.ForeignKey(
        PoolDocument, on_delete=models.CASCADE, related_name="assessor_judgments"
    )
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assessor_judgments"
    )
    grade = models.SmallIntegerField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assessor", "pool_document"], name="assessor_judgment_once"),
        ]

    def __str__(self):
        return f"{self.assessor}: {self.pool_document.document} = {self.grade}"


class AdjudicationDecision(models.Model):
    """The adjudicated grade of a pool document: agreed, a single assessor's, settled by a rule, or decided
    by the researcher."""

    class Method(models.TextChoices):
        AGREED = "agreed", "All assessors agreed"
        # One grade alone: nothing was agreed between two people.
        SINGLE_ASSESSOR = "single_assessor", "Single assessor (no second grade)"
        IN_TURN = "in_turn", "One-point difference: judge taken in turn (2002 rule)"
        MAJORITY = "majority", "Majority of assessors"
        RESEARCHER = "researcher", "Decided by the researcher"

    pool_document = models.OneToOneField(PoolDocument, on_delete=models.CASCADE, related_name="decision")
    grade = models.SmallIntegerField()
    method = models.CharField(max_length=20, choices=Method.choices)
    preset = models.CharField(
        max_length=20, blank=True, help_text="The preset that produced it; blank by hand."
    )
    # Whose grade it is: the assessor taken (agreed, single assessor, in turn) or the researcher (by hand);
    # none for a majority.
    judged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.CharField(max_length=300, blank=True)
    decided_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(method__in=["agreed", "single_assessor", "in_turn", "majority", "researcher"]),
                name="decision_method_known",
            ),
        ]

    def __str__(self):
        return f"{self.pool_document.document} = {self.grade} ({self.method})"
