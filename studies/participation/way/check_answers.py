"""One answer to one of the study's attention or comprehension checks, the participant's form (the items,
presets and progress: studies/participation/recruitment/checks.py), stored through THE form step."""

from __future__ import annotations

from studies.errors import Refused
from studies.models import Participant, Recruitment
from studies.participation.events.rules import client_id_check, participant_check_consented
from studies.participation.recruitment.checks import CHECK_PRESETS, checks_progress, gold_failures
from studies.participation.recruitment.states import participant_screen_out
from studies.participation.way.form_step import FormEvent, form_step


def check_answer_record(
    *,
    participant: Participant,
    name: str,
    answer: str,
    client_event_id: str,
    sequence: int | None = None,
    client_time=None,
) -> dict:
    """One answer to one of the study's checks, stored as a "check" Event with its outcome (passed, and why
    not). Past the preset's limit the participant is screened out: failed attention checks give the failed-
    checks code, a comprehension check failed on every try the screened-out one. A re-sent answer (same
    client event id) returns the first answer's outcome."""
    client_id_check(client_event_id)

    def check() -> tuple[dict, dict, int, dict]:
        """The pending item, the preset's policy, the attention failures so far and the answer's ack."""
        participant_check_consented(participant)
        recruitment = Recruitment.objects.filter(study_id=participant.study_id).first()
        progress = checks_progress(participant, recruitment)
        item = next((i for i in progress.pending if i["name"] == name), None)
        if item is None or recruitment is None:  # no pending item without the study's checks
            raise Refused("This question is already answered.")
        policy = CHECK_PRESETS[recruitment.checks.get("preset", "prolific")]
        attention_failures = progress.attention_failures + gold_failures(participant)
        passed = isinstance(answer, str) and answer == item["answer"]
        tries = progress.tries.get(name, 0) + (not passed)
        reason = "" if passed else (f"{item['kind']} check {name}: answered {str(answer)[:200]!r}")
        ack = {
            "ok": True,
            "name": name,
            "kind": item["kind"],
            "passed": passed,
            "reason": reason,
            "tries": tries,
        }
        return item, policy, attention_failures, ack

    def write(checked: tuple[dict, dict, int, dict]) -> FormEvent:
        return FormEvent(type="check", data={"name": name, "answer": str(answer)[:200]}, ack=checked[3])

    def after(checked: tuple[dict, dict, int, dict], event: FormEvent) -> None:
        item, policy, attention_failures, _ = checked
        ack = event.ack  # the stored row holds the ack without "screened_out" (written before it)
        if ack["passed"]:
            return
        if (
            item["kind"] == "attention"
            and attention_failures + 1 >= policy["attention_failures_to_screen_out"]
        ):
            participant_screen_out(
                participant=participant,
                failed_checks=True,
                reason=f"{attention_failures + 1} attention checks failed (last: {name})",
            )
            ack["screened_out"] = True
        elif item["kind"] == "comprehension" and ack["tries"] >= policy["comprehension_tries"]:
            tries = ack["tries"]
            participant_screen_out(
                participant=participant,
                reason=f"comprehension check {name} failed {tries} time{'s' if tries > 1 else ''}",
            )
            ack["screened_out"] = True

    return form_step(
        participant=participant,
        client_event_id=client_event_id,
        sequence=sequence,
        client_time=client_time,
        check=check,
        write=write,
        after=after,
    )
