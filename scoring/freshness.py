"""Whether a run's stored scores are the study's current ones, decided when read, never remembered
(docs/dashboards.md, "Is a run current?").

A run is current when it is done and, at the time of reading:
- on reference judgments: it and every session it holds were scored on the study's latest reference version
  (each SessionScore records the version it was scored on);
- the sessions it holds are the study's finished sessions (ended, not withdrawn, with a query, not a
  preview's): none ended since, none withdrawn since;
- on the participants' own judgments: each session's judgments are those it was scored with (each
  SessionScore records a checksum of them).

`runs_freshness(study, runs)` answers for any number of runs in three queries; every page and API that shows a
run's state reads it (the run list, the run's dashboard and status, the REST API), the status text too
(`Freshness.status_text`: "Done" only for a done run that is current). ScoringRun.stale is only the work
queue of re-scores (`requeue_stale_runs`), never read for what is shown: between a change's commit and the
on-commit hook that marks the queue, every read already says the run is not current.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import (
    BigIntegerField,
    BooleanField,
    Case,
    Count,
    Exists,
    F,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from studies.models import Judgment, Query, ReferenceVersion, SearchSession

from .models import ScoringRun, SessionScore

# The judgments checksum: each (document, grade) pair weighs (grade + 2) x a fixed pseudo-random number of
# its document (Knuth's multiplicative hash modulo 2^31 - 1), summed over the session's judgments. A grade
# changed, added or removed changes the sum (grades are >= -1, so every term is positive); two changes
# cancelling out would need a coincidence of about 1 in 2^31. The same sum in Python (at scoring) and in SQL
# (when read).
CHECKSUM_MULTIPLIER = 2654435761
CHECKSUM_MODULUS = 2147483647


def judgments_checksum(pairs: Iterable[tuple[int, int]]) -> int:
    """The checksum of a session's judgments, (document id, grade) pairs; 0 for none."""
    return sum(
        (grade + 2) * ((document * CHECKSUM_MULTIPLIER) % CHECKSUM_MODULUS) for document, grade in pairs
    )


def _judgments_checksum_now(session_ref: str):
    """The checksum of the judgments the session of `session_ref` (an OuterRef name) holds now, in SQL."""
    term = (F("grade") + 2) * ((F("document_id") * Value(CHECKSUM_MULTIPLIER)) % Value(CHECKSUM_MODULUS))
    total = (
        Judgment.objects.filter(session_id=OuterRef(session_ref))
        .order_by()
        .values("session_id")
        .annotate(total=Sum(term, output_field=BigIntegerField()))
        .values("total")
    )
    return Coalesce(Subquery(total, output_field=BigIntegerField()), Value(0), output_field=BigIntegerField())


def scorable_sessions(study_id: int) -> QuerySet[SearchSession]:
    """The study's finished sessions, the ones a run scores: ended (not withdrawn) with at least one query,
    never a preview's nor a practice task's (Scenario.practice: logged like any task, never scored)."""
    return SearchSession.objects.filter(
        Exists(Query.objects.filter(session_id=OuterRef("pk"))),
        assignment__participant__study_id=study_id,
        ended_at__isnull=False,
        assignment__participant__preview_at__isnull=True,
        assignment__scenario__practice=False,
    ).exclude(end_reason=SearchSession.EndReason.WITHDRAWN)


@dataclass(frozen=True)
class Freshness:
    """Whether a run's scores are current, and if not, why (plain sentences, for pages and the API)."""

    current: bool
    reasons: tuple[str, ...] = ()
    latest_reference_number: int | None = None
    # What the run's page, the runs list and the status JSON say of its state: one text, so that "Done" never
    # stands beside "not current" (status_text_for).
    status_text: str = "Done"

    @property
    def stale(self) -> bool:
        return not self.current

    def text(self) -> str:
        if self.current:
            return "current: the study's latest data"
        return "not current: " + "; ".join(self.reasons)

    def as_dict(self) -> dict:
        return {
            "current": self.current,
            "reasons": list(self.reasons),
            "latest_reference_version_number": self.latest_reference_number,
        }


# A done default run that is not current: the hooks re-score it (or are about to).
UPDATING_TEXT = "Updating: new data are waiting to be scored"
# A done run that is not current and that nothing re-scores (not the default run).
NOT_CURRENT_TEXT = "Done, not current"


def status_text_for(run: ScoringRun, current: bool) -> str:
    """The run's status as shown, from its status and whether it is current (never ScoringRun.stale)."""
    if run.status != ScoringRun.Status.DONE:
        return run.get_status_display()
    if current:
        return run.get_status_display()
    return UPDATING_TEXT if run.is_default else NOT_CURRENT_TEXT


def run_settled(run: ScoringRun, freshness: Freshness) -> bool:
    """Whether a run's page has nothing more to follow: it is finished and current, or no re-score is coming
    (it is not the default run, which the hooks re-score, or its scoring failed). The status box polls
    status.json until then and reloads the page when it is."""
    if not run.is_finished:
        return False
    return freshness.current or not run.is_default or run.status == ScoringRun.Status.FAILED


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def runs_freshness(study, runs: Iterable[ScoringRun]) -> dict[int, Freshness]:
    """{run id: Freshness} for runs of `study` (with their reference_version selected, or one query more
    each), in three queries whatever their number: the latest reference version, the count of the study's
    finished sessions, and one grouped read of the runs' session scores."""
    return _runs_freshness(study.pk, list(runs))


def run_freshness(run: ScoringRun) -> Freshness:
    """One run's Freshness (three queries)."""
    return _runs_freshness(run.study_id, [run])[run.pk]


def _runs_freshness(study_id: int, runs: list[ScoringRun]) -> dict[int, Freshness]:
    if not runs:
        return {}
    latest = (
        ReferenceVersion.objects.filter(study_id=study_id)
        .order_by("-number")
        .values_list("pk", "number")
        .first()
    )
    latest_pk, latest_number = latest if latest is not None else (None, None)
    finished = scorable_sessions(study_id)
    finished_count = finished.count()
    on_reference = Q(run__judgments=ScoringRun.Judgments.REFERENCE)
    on_participants = Q(run__judgments=ScoringRun.Judgments.PARTICIPANT)
    off_version = on_reference & (Q(reference_version__isnull=True) | ~Q(reference_version_id=latest_pk))
    rows = (
        SessionScore.objects.filter(run_id__in=[run.pk for run in runs])
        .order_by()
        .values("run_id")
        .annotate(
            scored=Count("pk"),
            kept=Count("pk", filter=Q(Exists(finished.filter(pk=OuterRef("session_id"))))),
            off_version=Count("pk", filter=off_version),
            oldest=Min("reference_version__number", filter=off_version),
            changed=Count(
                "pk",
                filter=on_participants
                & Q(judgments_checksum__isnull=False)
                & ~Q(judgments_checksum=_judgments_checksum_now("session_id")),
            ),
            unrecorded=Count("pk", filter=on_participants & Q(judgments_checksum__isnull=True)),
        )
    )
    counts: dict[int, dict] = {row["run_id"]: dict(row) for row in rows}
    empty = {"scored": 0, "kept": 0, "off_version": 0, "oldest": None, "changed": 0, "unrecorded": 0}
    return {run.pk: _freshness(run, counts.get(run.pk, empty), finished_count, latest_number) for run in runs}


def _freshness(run: ScoringRun, counts: dict, finished: int, latest: int | None) -> Freshness:
    reasons = _status_reasons(run)
    if run.judgments == ScoringRun.Judgments.REFERENCE:
        reasons += _reference_reasons(run, counts, latest)
    else:
        reasons += _judgment_reasons(counts)
    reasons += _session_reasons(run, counts, finished)
    return Freshness(
        current=not reasons,
        reasons=tuple(reasons),
        latest_reference_number=latest,
        status_text=status_text_for(run, not reasons),
    )


_STATUS_REASONS: dict[str, str] = {
    ScoringRun.Status.PENDING: "not scored yet: waiting for a worker",
    ScoringRun.Status.RUNNING: "being scored now",
    ScoringRun.Status.FAILED: "its scoring failed",
}


def _status_reasons(run: ScoringRun) -> list[str]:
    reason = _STATUS_REASONS.get(run.status)
    return [reason] if reason else []


def _reference_reasons(run: ScoringRun, counts: dict, latest: int | None) -> list[str]:
    version = run.reference_version.number if run.reference_version is not None else None
    if latest is None:
        return ["the study has no reference version"]
    if version is None:
        return [f"its reference version was deleted; v{latest} is the latest"]
    if version != latest:
        return [f"scored on reference v{version}, v{latest} is the latest"]
    if counts["off_version"]:
        older = f"v{counts['oldest']}" if counts["oldest"] is not None else "an older version"
        return [
            f"{_plural(counts['off_version'], 'session')} still scored on reference {older}, "
            f"v{latest} is the latest"
        ]
    return []


def _judgment_reasons(counts: dict) -> list[str]:
    reasons = []
    if counts["changed"]:
        reasons.append(f"judgments changed in {_plural(counts['changed'], 'session')} since")
    if counts["unrecorded"]:
        # Rows from before scores recorded their judgments, of a run then marked for re-scoring.
        reasons.append(
            f"{_plural(counts['unrecorded'], 'session')} scored with no record of the judgments used"
        )
    return reasons


def _session_reasons(run: ScoringRun, counts: dict, finished: int) -> list[str]:
    reasons = []
    missing = finished - counts["kept"]
    gone = counts["scored"] - counts["kept"]
    if missing > 0 and run.status == ScoringRun.Status.DONE:
        reasons.append(f"{_plural(missing, 'session')} ended since")
    if gone > 0:
        reasons.append(
            f"{_plural(gone, 'scored session')} no longer {'counts' if gone == 1 else 'count'} "
            "(withdrawn since)"
        )
    return reasons


def stale_session_ids(run: ScoringRun) -> list[int]:
    """The sessions a re-score of `run` owes, by the same rules as Freshness: the study's finished sessions
    it lacks, the ones it holds that are no longer finished (the pass drops them), and, on reference
    judgments, those scored on another version than the run's; on the participants' judgments, those whose
    judgments changed. Two queries."""
    finished = set(scorable_sessions(run.study_id).values_list("pk", flat=True))
    held = SessionScore.objects.filter(run=run)
    if run.judgments == ScoringRun.Judgments.REFERENCE:
        off = Q(reference_version__isnull=True) | ~Q(reference_version_id=run.reference_version_id)
    else:
        off = Q(judgments_checksum__isnull=True) | ~Q(
            judgments_checksum=_judgments_checksum_now("session_id")
        )
    scored, owed = set(), set()
    flag = Case(When(off, then=Value(True)), default=Value(False), output_field=BooleanField())
    for session_id, is_off in held.annotate(is_off=flag).values_list("session_id", "is_off"):
        scored.add(session_id)
        if is_off or session_id not in finished:
            owed.add(session_id)
    return sorted(owed | (finished - scored))
