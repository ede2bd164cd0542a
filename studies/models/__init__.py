"""The studies app's models, one import point: `from studies.models import Study`. Each name is re-exported
explicitly (no star import), so a reader and a linter see where it comes from.

- core.py: collections and documents, the study and its design (grade scale, scenarios, systems),
  participants and their assignments, sessions, queries, shown results, events, judgments, reference
  versions, the audit log.
- assessment.py: expert assessment (plans, pools, assessors, their judgments, adjudication).
- attention.py: what participants saw and attended to (exposure per shown result, attention spans).
- assessor_work.py: the scenarios each assessor judges, the assessors' guidelines.
- llm_assessors.py: language-model assessors.
- llm_audits.py: robustness audits of a language-model assessor.
- references.py: the study's reference judgments, in numbered versions.
- generative.py: a generative system's turns and the prompts they were given.
- recruitment.py: a study's public link and panel settings, the panel's status notifications.
"""

from studies.models.core import (
    DEFAULT_GRADE_LABELS,
    ENDED_STATES,
    FREEING_STATES,
    STUDY_DESIGNS,
    STUDY_STATUSES,
    Assignment,
    Collection,
    Document,
    Event,
    EventOrigin,
    GradeLevel,
    Judgment,
    JudgmentChange,
    Participant,
    ParticipantQuerySet,
    ParticipantState,
    Query,
    Scenario,
    SearchSession,
    ShownResult,
    Study,
    System,
    access_token_digest,
    new_access_token,  # migration 0001 names it as studies.models.new_access_token
)

# isort: split
from studies.models.audit import AuditAction, AuditEntry

# isort: split
# After core, as the star import at the end of models.py registered them: the models' order stays.
from studies.models.assessment import (
    ASSESSORS_WHO_ARE_PEOPLE,
    AdjudicationDecision,
    AssessmentPlan,
    AssessmentPool,
    AssessorAssignment,
    AssessorInvitation,
    AssessorJudgment,
    PoolDocument,
    StudyAssessor,
)

# isort: split
from studies.models.assessor_work import AssessmentGuidelines, AssessorScenario
from studies.models.llm_assessors import LLMAssessor, LLMRequest, LLMRun
from studies.models.llm_audits import LLMAudit, LLMAuditItem
from studies.models.recruitment import (
    CODE_MODES,
    EFFORT_OUTCOMES,
    PANEL_STATUSES,
    PANELS,
    BeatTurn,
    CompletionCode,
    PanelNotification,
    Recruitment,
    SchedulerHeartbeat,
)
from studies.models.references import (
    NEGATIVE_REFERENCE_GRADES,
    ReferenceJudgment,
    ReferenceVersion,
    collection_reference_note,
    reference_grade_allowed,
)

# isort: split
from studies.models.generative import AnswerTurn, GenerationPrompt

# isort: split
from studies.models.library import CollectionJudgment, CollectionTopic, CollectionUpload, IndexVersion
from studies.models.retention import EventArchive

# isort: split
from studies.models.attention import AttentionSpan, PageExposure, ResultExposure

__all__ = [
    "AnswerTurn",
    "GenerationPrompt",
    "ASSESSORS_WHO_ARE_PEOPLE",
    "CODE_MODES",
    "EFFORT_OUTCOMES",
    "DEFAULT_GRADE_LABELS",
    "ENDED_STATES",
    "FREEING_STATES",
    "NEGATIVE_REFERENCE_GRADES",
    "PANELS",
    "PANEL_STATUSES",
    "STUDY_DESIGNS",
    "STUDY_STATUSES",
    "AdjudicationDecision",
    "AssessmentGuidelines",
    "AssessmentPlan",
    "AssessmentPool",
    "AssessorAssignment",
    "AssessorInvitation",
    "AssessorJudgment",
    "AssessorScenario",
    "Assignment",
    "AttentionSpan",
    "AuditAction",
    "AuditEntry",
    "BeatTurn",
    "Collection",
    "CollectionJudgment",
    "CollectionTopic",
    "CollectionUpload",
    "CompletionCode",
    "Document",
    "Event",
    "EventArchive",
    "EventOrigin",
    "GradeLevel",
    "IndexVersion",
    "Judgment",
    "JudgmentChange",
    "LLMAssessor",
    "LLMRequest",
    "LLMRun",
    "LLMAudit",
    "LLMAuditItem",
    "Participant",
    "PageExposure",
    "PanelNotification",
    "SchedulerHeartbeat",
    "ParticipantQuerySet",
    "ParticipantState",
    "PoolDocument",
    "Query",
    "Recruitment",
    "ReferenceJudgment",
    "ReferenceVersion",
    "ResultExposure",
    "Scenario",
    "SearchSession",
    "ShownResult",
    "Study",
    "StudyAssessor",
    "System",
    "access_token_digest",
    "new_access_token",
    "collection_reference_note",
    "reference_grade_allowed",
]
