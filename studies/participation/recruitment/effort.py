"""Minimum effort: a study's rules per task, read from its settings, and each participant's tasks as the
stored rows say (queries, judgments, the session's start and end, its events' times), never as the client
claims.
The flags themselves are one pure function (studies/participation/recruitment/effort_flags.py);
docs/recruitment.md."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Count, Max, Min

from studies.models import Event, Judgment, Participant, Query, Recruitment, SearchSession
from studies.participation.recruitment.effort_flags import (
    EFFORT_PRESETS,
    NO_RULES,
    EffortRules,
    Flag,
    SessionEffort,
    below_rules,
    effort_flags,
)

EFFORT_FIELDS = ("effort_min_queries", "effort_min_judgments", "effort_min_active_seconds")
MAX_EFFORT = {"effort_min_queries": 100, "effort_min_judgments": 1000, "effort_min_active_seconds": 24 * 3600}


def rules_of(recruitment: Recruitment | None) -> EffortRules:
    if recruitment is None:
        return NO_RULES
    return EffortRules(
        recruitment.effort_min_queries,
        recruitment.effort_min_judgments,
        recruitment.effort_min_active_seconds,
    )


def preset_of(recruitment: Recruitment) -> str:
    """The preset whose numbers the study's rules are, or "custom"."""
    rules = rules_of(recruitment)
    return next((name for name, preset in EFFORT_PRESETS.items() if preset == rules), "custom")


def preset_fields(name: str) -> dict[str, int]:
    preset = EFFORT_PRESETS[name]
    return {
        "effort_min_queries": preset.min_queries,
        "effort_min_judgments": preset.min_judgments,
        "effort_min_active_seconds": preset.min_active_seconds,
    }


def effort_errors(fields: dict) -> list[str]:
    """What is wrong with the effort settings among `fields`; empty when none is."""
    errors = []
    if "effort_preset" in fields and fields["effort_preset"] not in (*EFFORT_PRESETS, "custom"):
        errors.append(f"effort preset: one of {', '.join(EFFORT_PRESETS)} or custom")
    for name in EFFORT_FIELDS:
        value = fields.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_EFFORT[name]:
            errors.append(f"{name.replace('_', ' ')}: a whole number from 0 to {MAX_EFFORT[name]}")
    if fields.get("effort_outcome", "failed") not in ("failed", "flagged"):
        errors.append("effort outcome: failed or flagged")
    return errors


def session_efforts(sessions: Iterable[SearchSession]) -> dict[int, SessionEffort]:
    """{session id: SessionEffort} from the stored rows, in four queries whatever the number of sessions."""
    sessions = list(sessions)
    ids = [s.pk for s in sessions]
    queries = dict(
        Query.objects.filter(session_id__in=ids)
        .values_list("session_id")
        .annotate(n=Count("id"))
        .values_list("session_id", "n")
    )
    judgments = dict(
        Judgment.objects.filter(session_id__in=ids)
        .values_list("session_id")
        .annotate(n=Count("id"))
        .values_list("session_id", "n")
    )
    times = defaultdict(list)
    for session_id, client_time, server_time in (
        Event.objects.filter(session_id__in=ids)
        .order_by("id")
        .values_list("session_id", "client_time", "server_time")
    ):
        times[session_id].append((client_time or server_time).timestamp())
    spans = {
        row["session_id"]: (row["last"] - row["first"]).total_seconds()
        for row in Event.objects.filter(session_id__in=ids)
        .values("session_id")
        .annotate(first=Min("server_time"), last=Max("server_time"))
    }
    return {
        s.pk: SessionEffort(
            position=s.assignment.position,
            queries=queries.get(s.pk, 0),
            judgments=judgments.get(s.pk, 0),
            active_seconds=(s.ended_at - s.started_at).total_seconds() if s.ended_at else None,
            event_seconds=tuple(times[s.pk]),
            server_span_seconds=spans.get(s.pk),
        )
        for s in sessions
    }


def participant_flags(participant: Participant, recruitment: Recruitment | None = None) -> list[Flag]:
    """Every effort flag of the participant's tasks (retakes left out, as for completion)."""
    if recruitment is None:
        recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    sessions = SearchSession.objects.filter(
        assignment__participant=participant, assignment__retake_of__isnull=True
    ).select_related("assignment")
    return effort_flags(list(session_efforts(sessions).values()), rules_of(recruitment))


def study_flags(study_id: int, recruitment: Recruitment | None) -> dict[int, list[Flag]]:
    """{participant id: flags} for every participant of the study with a session (previews left out)."""
    sessions = list(
        SearchSession.objects.filter(
            assignment__participant__study_id=study_id,
            assignment__participant__preview_at__isnull=True,
            assignment__retake_of__isnull=True,
        ).select_related("assignment")
    )
    efforts = session_efforts(sessions)
    per_participant = defaultdict(list)
    for session in sessions:
        per_participant[session.assignment.participant_id].append(efforts[session.pk])
    rules = rules_of(recruitment)
    return {pk: effort_flags(tasks, rules) for pk, tasks in per_participant.items()}


def effort_shortfall(participant: Participant, recruitment: Recruitment | None) -> list[Flag]:
    """The participant's tasks below the study's rules (empty when the rules ask nothing or are met)."""
    rules = rules_of(recruitment)
    if not rules.asks_anything():
        return []
    return below_rules(participant_flags(participant, recruitment))


def shortfall_text(flags: list[Flag]) -> str:
    return "effort below the study's rules: " + "; ".join(flag.text() for flag in flags)
