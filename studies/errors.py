"""The studies app's refusals, one hierarchy: a view catches these classes, never a bare ValueError, so a
ValueError from a bug stays a 500 with a traceback instead of turning into a polite 4xx.

The studies app's refusals still subclass ValueError (callers and tests that catch ValueError keep working).
The participant's way has its own branch here (ParticipationError: Refused, RetryLater, InvalidEvent,
InvalidAnswers), which is not a ValueError; file imports raise `scoring.lib.errors.InputError` subclasses
(ImportFailure, FormatError) that name file and line.
"""


class StudiesError(ValueError):
    """A request the studies app refuses; the message says why, for a person."""


class DesignError(StudiesError):
    """The design cannot be built as asked: a grade scale, an enrolment that cannot be balanced, a retake."""


class SystemConfigError(DesignError):
    """A system's kind or configuration that cannot search (studies.search.systems.system_config_problem);
    `field` names what is wrong ("config" or "backend"), so the API and the forms put it next to that
    field."""

    def __init__(self, message: str, *, field: str = "config"):
        super().__init__(message)
        self.field = field


class DesignLockedError(DesignError):
    """Scenarios and systems cannot change once participants hold assignments built from them."""


class StudyStatusError(StudiesError):
    """The study is paused or closed (no new participants or sessions), or a status change the life cycle
    does not allow (studies/design/lifecycle.py)."""


class EnrolmentRefusedError(StudyStatusError, DesignError):
    """A researcher's enrolment refused because the study is paused or closed: a status refusal, and a design
    refusal like an enrolment that cannot be balanced (the page shows it, the API answers 409)."""


class StudyOwnerOnlyError(StudiesError):
    """What only a study's owner may do (delete it), asked by another of its researchers."""


class CollectionAccessError(StudiesError):
    """A collection the user may not use or share. The message never says whether another lab's collection
    exists: an unknown id and a collection one may not see read the same."""


class CollectionImportError(StudiesError):
    """Bad input or a refused import; the message says what and where (file:line when tied to a line)."""


class DocumentRefused(CollectionImportError):
    """A document the collection cannot store: `index` is its place in the input (from 0), `reason` names
    the field and the problem; the message says both with the document's id."""

    def __init__(self, index: int, external_id, reason: str):
        self.index, self.external_id, self.reason = index, external_id, reason
        if not isinstance(external_id, str):
            shown = "no id"
        else:
            shown = repr(external_id) if len(external_id) <= 40 else f"{external_id[:40]!r}…"
        super().__init__(f"document {index + 1} ({shown}): {reason}")


class AssessmentError(StudiesError):
    """A request the assessment rules refuse; the message says why, for the page."""


class AssessorSettingError(AssessmentError):
    """An LLM assessor's setting that does not hold (studies/assessment/llm/setup.py); `field` names it, so
    the API answers a 400 on that field and the page shows the message."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


class EventRefused(StudiesError):
    """The event cannot be stored as it is; the message names the field."""


class EventArchiveError(StudiesError):
    """The events of a study cannot be archived (or restored) as asked; nothing was deleted or changed."""


class ExportError(StudiesError):
    """Nothing to export, or a value that cannot be written in the format asked (TREC fields, the archive)."""


# --- the participant's way (studies/participation) ---


class ParticipationError(Exception):
    """The participant's way refuses: a message for the participant's page (not a ValueError, so a bug's
    ValueError is never shown to a participant as a refusal)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Refused(ParticipationError):
    """The action is not allowed (finished scenario, another participant's session, grade outside the
    scale…)."""


class RetryLater(Refused):
    """Not now, maybe later: the event's query is not stored yet, or a search cap is reached. The endpoints
    answer it (nothing stored) and the page keeps the event in its outbox; the services raise it as
    Refused."""


class InvalidEvent(ParticipationError, ValueError):
    """A form's client event id the log cannot hold (the pages answer 400 with the message)."""


class InvalidAnswers(Refused):
    def __init__(self, errors: dict[str, str]):
        super().__init__("Please check your answers.")
        self.errors = errors


class RecruitmentError(StudiesError):
    """A panel notification, export or recruitment setting refused; `errors` lists each problem (an export's,
    by line and field) when there are several."""

    def __init__(self, message: str, *, errors: list[str] | None = None):
        super().__init__(message)
        self.errors = errors or [message]
