"""Gold documents inside a scenario (docs/recruitment.md, "Gold documents"): the participant's answer, scored.

The pair and the step are read in studies/kernel/gold.py; the answer is scored against the pair pinned on the
session when its step was first shown, so a newer reference version never changes it. The answer is one Event
(type "gold", on the session, data {doc: grade}, ack {passed, reason, the pair}), stored once per client event
id like every form's.
It is never a Judgment of the session: the gold documents do not enter the session's ranked lists, its
judgments or its scores, which stay those of the search.

The rule: passed when the relevant document gets a grade of 1 or more and the off-topic one 0 (or a grade
below 0 on a scale that has one). The exact grade of the relevant document is not asked for: assessors
disagree about degrees of relevance (marginal or fair, fair or high) far more than about relevant or not, so
only the clear-cut call is scored; an attentive reader does not call a top-graded document not relevant, nor
an off-topic document relevant. A failure counts as a failed attention check toward the preset's screen-out
limit (prolific: two, strict: one), and screens out with the failed-checks code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from studies.errors import InvalidAnswers, Refused
from studies.kernel.gold import (
    GoldPair,
    gold_answered,
    gold_on,
    gold_order,
    gold_pair,
    gold_pinned,
)
from studies.models import (
    Participant,
    Recruitment,
    Scenario,
    SearchSession,
)
from studies.participation.events.rules import client_id_check, participant_check_consented
from studies.participation.recruitment.checks import CHECK_PRESETS, checks_progress, gold_failures
from studies.participation.recruitment.states import participant_screen_out
from studies.participation.way.form_step import FormEvent, form_step

_GRADE = re.compile(r"-?[0-9]{1,4}")


def _grade(raw, scale: list[int]) -> int | None:
    """A grade sent as a number or as a form's text; None when it is not one of the study's grades."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, str) and _GRADE.fullmatch(raw.strip()):
        value = int(raw.strip())
    else:
        return None
    return value if value in scale else None


def gold_score(
    *, scenario_code: str, relevant: str, off_topic: str, grades: Mapping[str, int]
) -> tuple[bool, str]:
    """(passed, reason): passed when the relevant document is graded 1 or more and the off-topic one 0 or
    less."""
    wrong = []
    if grades[relevant] < 1:
        wrong.append(f"judged relevant doc {relevant} as {grades[relevant]}")
    if grades[off_topic] > 0:
        wrong.append(f"judged off-topic doc {off_topic} as {grades[off_topic]}")
    return not wrong, (f"gold documents of scenario {scenario_code}: {'; '.join(wrong)}" if wrong else "")


def gold_answer_record(
    *,
    participant: Participant,
    session: SearchSession,
    grades: Mapping[str, object],
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """The participant's grades of the scenario's two gold documents ({external id: grade}), scored and stored
    as a "gold" Event of `session`, against the session's pinned pair (or, without a pin, the current one);
    returns its ack ({ok, passed, reason, scenario, relevant, off_topic, reference_version, shown[,
    screened_out]}). A re-sent answer (same client event id) returns the first one's ack. Refused: another
    participant's session, a search not ended, a task without gold documents or already judged, a document
    that is not one of the two. InvalidAnswers ({external id: message}): a document left without a grade, or
    a grade off the study's scale (the page and the API show it at that document)."""
    client_id_check(client_event_id)

    def check() -> tuple[dict[str, int], dict, str | None]:
        recruitment, scenario, pair = _gold_step_checked(participant, session)
        relevant, off_topic = pair.relevant.external_id, pair.off_topic.external_id
        cleaned = _grades_cleaned(grades, relevant, off_topic, study=participant.study)
        passed, reason = gold_score(
            scenario_code=scenario.code, relevant=relevant, off_topic=off_topic, grades=cleaned
        )
        shown = [
            d.external_id for d in gold_order(participant=participant, scenario_id=scenario.pk, pair=pair)
        ]
        ack = {
            "ok": True,
            "passed": passed,
            "reason": reason,
            "scenario": scenario.code,
            "relevant": relevant,
            "off_topic": off_topic,
            "relevant_grade": pair.relevant_grade,
            "reference_version": pair.version,
            "shown": shown,
        }
        screen_out = None if passed else _screen_out_reason(participant, recruitment, scenario)
        if screen_out:
            ack["screened_out"] = True
        return cleaned, ack, screen_out

    def write(checked: tuple[dict[str, int], dict, str | None]) -> FormEvent:
        # One answer per session: the session's row locked while the answer is checked and stored.
        cleaned, ack, _ = checked
        SearchSession.objects.select_for_update().filter(pk=session.pk).first()
        if gold_answered(session):
            raise Refused("These two documents are already judged.")
        return FormEvent(type="gold", data=cleaned, ack=ack, session=session)

    def after(checked: tuple[dict[str, int], dict, str | None], _: FormEvent) -> None:
        screen_out = checked[2]
        if screen_out:
            participant_screen_out(participant=participant, failed_checks=True, reason=screen_out)

    return form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=check,
        write=write,
        after=after,
    )


def _gold_step_checked(
    participant: Participant, session: SearchSession
) -> tuple[Recruitment, Scenario, GoldPair]:
    """The study's recruitment, the session's scenario and the gold pair to score against; Refused when the
    session is not the participant's, not ended, already finished, or its task has no gold documents left."""
    participant_check_consented(participant)
    if session.assignment.participant_id != participant.pk:
        raise Refused("This is not one of your search sessions.")
    if session.ended_at is None:
        raise Refused("Please finish the search first.")
    if session.end_reason == SearchSession.EndReason.WITHDRAWN or session.post_task_answers:
        raise Refused("This task is finished.")
    recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
    scenario = session.assignment.scenario
    if not (recruitment and gold_on(recruitment.checks)):
        raise Refused("This task has no further documents to judge.")
    if gold_answered(session):
        raise Refused("These two documents are already judged.")
    # The pair pinned when the step was first shown, never a newer version's; without a pin (an answer sent
    # without the step ever being asked for, or a step shown before pins existed), the current pair.
    pair = gold_pinned(participant=participant, session=session) or gold_pair(
        study_id=participant.study_id, topic_id=scenario.topic_id
    )
    if pair is None:
        raise Refused("This task has no further documents to judge.")
    return recruitment, scenario, pair


def _grades_cleaned(grades: Mapping[str, object], relevant: str, off_topic: str, *, study) -> dict[str, int]:
    """The two documents' grades as the study's grades. Refused for a document that is not one of the two
    (before the scale is read); InvalidAnswers for one left without a grade, or a grade off the scale."""
    unknown = [str(doc)[:100] for doc in grades if doc not in (relevant, off_topic)]
    if unknown:
        raise Refused(f"Document {unknown[0]!r} is not one of this task's two documents.")
    scale = study.grade_values()
    missing = {
        doc: "Please choose a grade." for doc in (relevant, off_topic) if grades.get(doc) in (None, "")
    }
    if missing:
        raise InvalidAnswers(missing)
    cleaned = {doc: _grade(grades[doc], scale) for doc in (relevant, off_topic)}
    off_scale = {
        doc: f"The grade {str(grades[doc])[:20]!r} for document {doc} is not on this study's scale "
        f"({', '.join(str(g) for g in scale)})."
        for doc, value in cleaned.items()
        if value is None
    }
    if off_scale:
        raise InvalidAnswers(off_scale)
    return {doc: value for doc, value in cleaned.items() if value is not None}  # off_scale refused any None


def _screen_out_reason(participant: Participant, recruitment: Recruitment, scenario: Scenario) -> str | None:
    """Why a failed gold answer screens the participant out (it counts as a failed attention check toward the
    preset's limit), or None while they stay under it."""
    policy = CHECK_PRESETS[recruitment.checks.get("preset", "prolific")]
    failures = checks_progress(participant, recruitment).attention_failures + gold_failures(participant) + 1
    if failures >= policy["attention_failures_to_screen_out"]:
        return f"{failures} attention checks failed (last: gold documents of scenario {scenario.code})"
    return None
