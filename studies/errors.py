"""The studies app's refusals, one hierarchy: a view catches these classes, never a bare ValueError, so a
ValueError from a bug stays a 500 with a traceback instead of turning into a polite 4xx.

They still subclass ValueError (callers and tests that catch ValueError keep working). The participant's way
has its own (`participation.ParticipationError`: Refused, RetryLater, InvalidEvent), and file imports raise
`scoring.lib.errors.InputError` subclasses (ImportFailure, FormatError) that name file and line.
"""


class StudiesError(ValueError):
    """A request the studies app refuses; the message says why, for a person."""


class DesignError(StudiesError):
    """The design cannot be built as asked: a grade scale, an enrolment that cannot be balanced, a retake."""


class DesignLockedError(DesignError):
    """Scenarios and systems cannot change once participants hold assignments built from them."""


class StudyOwnerOnlyError(StudiesError):
    """What only a study's owner may do (delete it), asked by another of its researchers."""


class CollectionAccessError(StudiesError):
    """A collection the user may not use or share. The message never says whether another lab's collection
    exists: an unknown id and a collection one may not see read the same."""


class CollectionImportError(StudiesError):
    """Bad input or a refused import; the message says what and where (file:line when tied to a line)."""


class AssessmentError(StudiesError):
    """A request the assessment rules refuse; the message says why, for the page."""


class EventRefused(StudiesError):
    """The event cannot be stored as it is; the message names the field."""


class ExportError(StudiesError):
    """Nothing to export, or a value that cannot be written in the format asked (TREC fields, the archive)."""
