"""Gold documents inside a scenario (docs/recruitment.md, "Gold documents"): the reads, and the session's pin.

When a study turns them on (`Recruitment.checks["gold"] is True`), each scenario whose topic has, in the
newest reference version, a document at the topic's top grade (above 0) and a document judged 0 gets a gold
step after its search and before its post-task questions: the participant judges those two documents, and the
answer is scored (studies/participation/way/gold.py). The pair is chosen deterministically, so it can be
reproduced from the reference version alone: the relevant document is the one at the topic's highest grade
with the lowest id, the off-topic one the judged-0 document with the lowest id (numeric ids in number order,
then the others as text). The order they are shown in is fixed per participant and scenario, and differs
between participants.

The pair is pinned per session the first time its step is computed (`gold_pending`, which the step machine,
the participant API's way, the post-task check and the simulation all ask): a server-only "gold_pair" Event on
the session holds the two documents, the reference version and the order shown. From then on the step and the
answer's scoring read the pin, so a reference version published while the step is open changes nothing for
that session. Sessions whose step was computed before pins existed have none and read the current pair.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import cast

from django.db import IntegrityError, transaction

from studies.models import (
    Document,
    Event,
    EventOrigin,
    Participant,
    Recruitment,
    ReferenceJudgment,
    ReferenceVersion,
    Scenario,
    SearchSession,
)


@dataclass(frozen=True)
class GoldPair:
    """A scenario's two gold documents, from reference version `version`."""

    topic_id: str
    version: int
    relevant: Document  # at the topic's top grade
    relevant_grade: int
    off_topic: Document  # judged 0
    order: tuple[str, ...] = ()  # the external ids in the order shown, when the pair is a session's pin


PIN_EVENT = "gold_pair"


def gold_on(checks) -> bool:
    """Whether a study's checks setting (Recruitment.checks) turns gold documents on."""
    return isinstance(checks, dict) and checks.get("gold") is True


def study_gold_on(study_id: int) -> bool:
    checks = Recruitment.objects.filter(study_id=study_id).values_list("checks", flat=True).first()
    return gold_on(checks)


def _doc_key(external_id: str):
    """The order "lowest id" means: numeric ids by number (9 before 10), then the others as text."""
    numeric = external_id.isascii() and external_id.isdigit()
    return (not numeric, int(external_id) if numeric else 0, external_id)


def gold_pairs(*, study_id: int, topic_ids) -> dict[str, GoldPair]:
    """{topic_id: GoldPair} for the topics of `topic_ids` that have a pair in the newest reference version."""
    version = ReferenceVersion.objects.filter(study_id=study_id).order_by("-number").first()
    if version is None:
        return {}
    by_topic: dict[str, list] = {}
    for topic_id, doc_id, external_id, grade in ReferenceJudgment.objects.filter(
        version=version, topic_id__in=list(topic_ids)
    ).values_list("topic_id", "document_id", "document__external_id", "grade"):
        by_topic.setdefault(topic_id, []).append((grade, _doc_key(external_id), doc_id))
    chosen = {}
    for topic_id, rows in by_topic.items():
        top = max(grade for grade, _, _ in rows)
        zeros = [(key, doc_id) for grade, key, doc_id in rows if grade == 0]
        if top <= 0 or not zeros:
            continue
        relevant = min((key, doc_id) for grade, key, doc_id in rows if grade == top)[1]
        chosen[topic_id] = (top, relevant, min(zeros)[1])
    documents = Document.objects.in_bulk([d for _, r, o in chosen.values() for d in (r, o)])
    return {
        topic_id: GoldPair(topic_id, version.number, documents[relevant], top, documents[off_topic])
        for topic_id, (top, relevant, off_topic) in chosen.items()
    }


def gold_pair(*, study_id: int, topic_id: str) -> GoldPair | None:
    return gold_pairs(study_id=study_id, topic_ids=[topic_id]).get(topic_id)


def gold_answered(session: SearchSession) -> bool:
    return Event.objects.filter(
        session_id=session.pk, type="gold", origin=EventOrigin.SERVER, payload__ack__ok=True
    ).exists()


def _pin_id(session: SearchSession) -> str:
    """The pin's client event id: one per assignment position, so a second pin of the session cannot be
    stored, an archive's copy keeps it, and "/" keeps it out of every client's ids (1..64 letters, digits or
    _.:-), so no client can take it first."""
    return f"server/gold-pair/{session.assignment.position}"


def gold_pinned(*, participant: Participant, session: SearchSession) -> GoldPair | None:
    """The pair pinned on this session, or None (no pin yet, or a pin whose documents are gone)."""
    data = (
        Event.objects.filter(session_id=session.pk, type=PIN_EVENT, origin=EventOrigin.SERVER)
        .order_by("id")
        .values_list("payload__data", flat=True)
        .first()
    )
    if not isinstance(data, dict):
        return None
    relevant_id, off_topic_id = data.get("relevant"), data.get("off_topic")
    if not isinstance(relevant_id, str) or not isinstance(off_topic_id, str):
        return None
    ids = (relevant_id, off_topic_id)
    documents = {
        d.external_id: d
        for d in Document.objects.filter(collection__studies__id=participant.study_id, external_id__in=ids)
    }
    if len(documents) != 2:
        return None
    order = data.get("order")
    return GoldPair(
        str(data.get("topic", "")),
        cast(int, data.get("reference_version")),  # gold_pin writes both numbers
        documents[ids[0]],
        cast(int, data.get("relevant_grade")),
        documents[ids[1]],
        tuple(order) if isinstance(order, list) and sorted(order) == sorted(ids) else (),
    )


def gold_pin(
    *, participant: Participant, session: SearchSession, scenario: Scenario, pair: GoldPair
) -> GoldPair:
    """Pin `pair` on the session (once: a second call, or two at once, keep the first pin) and return the pin.
    Server time only, no client time or sequence number, like the server's page_reload event."""
    order = tuple(
        d.external_id for d in gold_order(participant=participant, scenario_id=scenario.pk, pair=pair)
    )
    try:
        with transaction.atomic():
            Event.objects.create(
                participant_id=participant.pk,
                session=session,
                type=PIN_EVENT,
                client_event_id=_pin_id(session),
                origin=EventOrigin.SERVER,
                payload={
                    "data": {
                        "source": "server",
                        "topic": pair.topic_id,
                        "relevant": pair.relevant.external_id,
                        "off_topic": pair.off_topic.external_id,
                        "relevant_grade": pair.relevant_grade,
                        "reference_version": pair.version,
                        "order": list(order),
                    },
                    "ack": {"ok": True},
                },
            )
    except IntegrityError:  # pinned at the same moment by another request: that pin holds
        return gold_pinned(participant=participant, session=session) or pair
    return GoldPair(pair.topic_id, pair.version, pair.relevant, pair.relevant_grade, pair.off_topic, order)


def session_gold_pair(
    *, participant: Participant, session: SearchSession, scenario: Scenario
) -> GoldPair | None:
    """The session's pair: its pin, or else the current pair, pinned now; None when the topic has no pair (and
    no pin). The caller checks that the study has gold documents on and the step is open."""
    pinned = gold_pinned(participant=participant, session=session)
    if pinned is not None:
        return pinned
    pair = gold_pair(study_id=participant.study_id, topic_id=scenario.topic_id)
    if pair is None:
        return None
    return gold_pin(participant=participant, session=session, scenario=scenario, pair=pair)


def gold_pending(*, participant: Participant, session: SearchSession, scenario: Scenario) -> GoldPair | None:
    """The gold pair the participant still has to judge for this session, or None: the study has gold
    documents on, the search has ended (not by a withdrawal), its post-task questions are not answered yet (a
    setting turned on later asks nothing of tasks already done), the topic has a pair (or the session a pin),
    and no answer is stored. The first time it finds a pair, it pins it on the session."""
    if (
        session.ended_at is None
        or session.end_reason == SearchSession.EndReason.WITHDRAWN
        or session.post_task_answers
        or not study_gold_on(participant.study_id)
        or gold_answered(session)
    ):
        return None
    return session_gold_pair(participant=participant, session=session, scenario=scenario)


def gold_order(*, participant: Participant, scenario_id: int, pair: GoldPair) -> list[Document]:
    """The two documents in the order this participant sees them for this scenario: the pin's order when the
    pair is a session's pin; otherwise fixed for them (a reload shows the same order), random between
    participants, so neither place says which document is which."""
    if pair.order:
        by_id = {pair.relevant.external_id: pair.relevant, pair.off_topic.external_id: pair.off_topic}
        return [by_id[doc] for doc in pair.order]
    digest = hashlib.sha256(f"gold:{participant.pk}:{participant.code}:{scenario_id}".encode()).digest()
    first, second = pair.relevant, pair.off_topic
    return [first, second] if digest[0] % 2 == 0 else [second, first]
