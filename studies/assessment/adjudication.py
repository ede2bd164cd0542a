"""Agreement between assessors (and of participants with a reference) and adjudication: the presets and the
researcher's decisions. The agreement math is in scoring/lib/agreement.py; docs/assessing.md explains the
rules, including our reading of the 2002 paper's rule for disagreements."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
from django.db import transaction
from django.utils import timezone

from scoring.lib import agreement
from scoring.lib.reliability import AgreementEstimate, graded_twice_or_more
from studies.assessment.agreement_estimates import all_estimates, estimate_texts, pair_estimates
from studies.assessment.pages import Texts
from studies.assessment.selectors import DocumentGrades, document_grades
from studies.errors import AssessmentError
from studies.models import (
    ASSESSORS_WHO_ARE_PEOPLE,
    AdjudicationDecision,
    Judgment,
    PoolDocument,
    ReferenceVersion,
    Scenario,
    ShownResult,
    Study,
    StudyAssessor,
)

PRESETS = {
    "2002": "2002 paper: one-point differences taken from each judge in turn, larger ones to the researcher",
    "researcher": "The researcher decides every disagreement",
    "majority": "Majority of assessors, then the researcher",
}


# How the outcome of a preset names each method: "28 agreed" would claim an agreement that a single
# assessor's grade is not.
METHOD_PHRASES = {
    AdjudicationDecision.Method.AGREED: "agreed",
    AdjudicationDecision.Method.SINGLE_ASSESSOR: "single assessor (no second grade)",
    AdjudicationDecision.Method.IN_TURN: "one point apart, judge taken in turn",
    AdjudicationDecision.Method.MAJORITY: "by majority",
}


@dataclass
class AdjudicationResult:
    decided: Counter = field(default_factory=Counter)  # method -> count
    to_researcher: list[DocumentGrades] = field(default_factory=list)
    awaiting_judgments: int = 0
    kept_by_hand: int = 0

    def decided_text(self) -> str:
        """e.g. "28 single assessor (no second grade)", "3 agreed, 2 by majority"; "none"."""
        return (
            ", ".join(
                f"{count} {METHOD_PHRASES.get(method, method)}"
                for method, count in sorted(self.decided.items())
            )
            or "none"
        )


@transaction.atomic
def adjudicate(*, study: Study, preset: str, decided_by) -> AdjudicationResult:
    """Settle every completely judged pool document by a preset; what the preset leaves goes to the
    researcher.

    Unanimous documents are "agreed" whatever the preset; a document graded by one person alone (a single
    assessor, or one allocated per document) is "single_assessor", its grade taken as it is. Decisions made
    by hand are kept; the preset's own earlier decisions are recomputed (grades may have changed). Presets:
    - "2002": a one-point spread (max - min = 1) takes the grade of the judges in turn: a rotation over the
      study's assessors (invitation order) walks the one-point disagreements in scenario, document order and
      takes the next judge in the rotation who graded the document (Järvelin & Kekäläinen 2002, 3.1: "the
      assessment was chosen from each judge in turn"); a spread of two or more goes to the researcher.
    - "majority": a grade given by more than half of the document's assessors; otherwise the researcher.
    - "researcher": every disagreement goes to the researcher.
    """
    if preset not in PRESETS:
        raise AssessmentError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    rows = document_grades(study)
    by_hand = _preset_decisions_clear(study)
    rotation = [member.id for member in study.assessors.filter(ASSESSORS_WHO_ARE_PEOPLE).order_by("id")]
    turn = 0
    now = timezone.now()
    result = AdjudicationResult()
    decisions = []
    for row in rows:
        if not row.grades:
            continue
        if not row.complete:
            result.awaiting_judgments += 1
            continue
        if row.pool_document.id in by_hand:
            result.kept_by_hand += 1
            continue
        settled, turn = _settle(row, preset, rotation, turn)
        if settled is None:
            result.to_researcher.append(row)
            continue
        decisions.append(
            AdjudicationDecision(
                pool_document=row.pool_document,
                grade=settled.grade,
                method=settled.method,
                preset=preset,
                judged_by=settled.judged_by,
                decided_by=decided_by,
                note=settled.note[:300],
                decided_at=now,
            )
        )
        result.decided[settled.method] += 1
    AdjudicationDecision.objects.bulk_create(decisions)
    return result


def _preset_decisions_clear(study: Study) -> set[int]:
    """Delete the presets' earlier decisions (they are recomputed); the ids of the pool documents the
    researcher decided by hand, which are kept."""
    existing = {
        decision.pool_document_id: decision
        for decision in AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study)
    }
    by_hand = {
        pd_id
        for pd_id, decision in existing.items()
        if decision.method == AdjudicationDecision.Method.RESEARCHER
    }
    AdjudicationDecision.objects.filter(
        id__in=[d.id for pd_id, d in existing.items() if pd_id not in by_hand]
    ).delete()
    return by_hand


class _Settled(NamedTuple):
    grade: int
    method: str
    judged_by: Any  # the user whose grade it is (None for a majority)
    note: str


def _settle(row: DocumentGrades, preset: str, rotation: list[int], turn: int) -> tuple[_Settled | None, int]:
    """How the preset settles one completely judged document (None: the researcher decides), and the
    "2002" rotation's turn after it."""
    values = [grade for _member, grade in row.grades]
    if len(row.grades) == 1:
        member, grade = row.grades[0]
        note = f"graded by {member.user.username} alone"
        return _Settled(grade, AdjudicationDecision.Method.SINGLE_ASSESSOR, member.user, note), turn
    if row.spread == 0:
        names = ", ".join(member.user.username for member, _grade in row.grades)
        first = row.grades[0][0].user
        return _Settled(values[0], AdjudicationDecision.Method.AGREED, first, f"agreed by {names}"), turn
    if preset == "2002" and row.spread == 1:
        member, grade, turn = _next_in_turn(row, rotation, turn)
        note = f"one point apart; {member.user.username}'s turn"
        return _Settled(grade, AdjudicationDecision.Method.IN_TURN, member.user, note), turn
    if preset == "majority" and Counter(values).most_common(1)[0][1] * 2 > len(values):
        grade, count = Counter(values).most_common(1)[0]
        note = f"{count} of {len(values)} assessors"
        return _Settled(grade, AdjudicationDecision.Method.MAJORITY, None, note), turn
    return None, turn


def _next_in_turn(row: DocumentGrades, rotation: list[int], turn: int) -> tuple[StudyAssessor, int, int]:
    """The next judge in the rotation (from `turn`) who graded the document: (member, grade, the next turn).
    Every grade is an assessor's of the study (document_grades), and the rotation is all of them."""
    judges = {member.id: (member, grade) for member, grade in row.grades}
    for step in range(len(rotation)):
        candidate = rotation[(turn + step) % len(rotation)]
        if candidate in judges:
            member, grade = judges[candidate]
            return member, grade, (turn + step + 1) % len(rotation)
    raise AssessmentError(f"no assessor of the study graded pool document {row.pool_document.id}")


@transaction.atomic
def adjudication_decide(
    *, pool_document: PoolDocument, grade: int, decided_by, note: str = ""
) -> AdjudicationDecision:
    """The researcher's decision for one document; kept when a preset is run again."""
    study = pool_document.pool.scenario.study
    if grade not in study.grade_values():
        raise AssessmentError(f"grade {grade} is not in the study's scale")
    decision, _ = AdjudicationDecision.objects.update_or_create(
        pool_document=pool_document,
        defaults={
            "grade": grade,
            "method": AdjudicationDecision.Method.RESEARCHER,
            "preset": "",
            "judged_by": decided_by,
            "decided_by": decided_by,
            "note": note[:300],
            "decided_at": timezone.now(),
        },
    )
    return decision


@dataclass
class PairAgreement(Texts):
    first: str
    second: str
    n: int
    percent: float
    kappa_linear: float
    kappa_quadratic: float
    matrix: np.ndarray
    estimates: list[AgreementEstimate] = field(default_factory=list)

    def matrix_rows(self):
        return list(enumerate(self.matrix.tolist()))

    def estimate_rows(self):
        """(estimate, its texts) for the page, in PAIR_COEFFICIENTS' order."""
        return [(estimate, estimate_texts(estimate)) for estimate in self.estimates]


@dataclass
class AgreementBlock(Texts):
    """Agreement for one scenario, or overall (scenario None)."""

    scenario: Scenario | None
    units: int  # documents with at least two grades: the n of every coefficient over all assessors
    pairs: list[PairAgreement]
    alpha_ordinal: float
    alpha_interval: float
    # Every coefficient over all assessors with its interval (agreement_estimates.all_estimates).
    estimates: list[AgreementEstimate] = field(default_factory=list)
    graded_once: int = 0  # documents graded by one assessor alone: no agreement, left out of every figure

    def estimate_rows(self):
        return [(estimate, estimate_texts(estimate)) for estimate in self.estimates]


def _agreement_block(
    scenario, rows: list[DocumentGrades], members: list[StudyAssessor], scale: list[int]
) -> AgreementBlock:
    column = {member.id: i for i, member in enumerate(members)}
    data = np.full((len(members), len(rows)), np.nan)
    for unit, row in enumerate(rows):
        for member, grade in row.grades:
            data[column[member.id], unit] = grade
    pairs = []
    for (i, first), (j, second) in itertools.combinations(enumerate(members), 2):
        both = ~np.isnan(data[i]) & ~np.isnan(data[j])
        if not both.any():
            continue
        a, b = data[i, both].astype(int), data[j, both].astype(int)
        matrix = agreement.confusion_matrix(a, b, scale)
        pairs.append(
            PairAgreement(
                first.user.username,
                second.user.username,
                int(both.sum()),
                agreement.percent_agreement(a, b),
                agreement.kappa_from_matrix(matrix, "linear"),
                agreement.kappa_from_matrix(matrix, "quadratic"),
                matrix,
                pair_estimates(matrix),
            )
        )
    # The library's one rule for the figures over all assessors: a document graded once is left out.
    twice, graded_once = graded_twice_or_more(data)
    units = twice.shape[1]
    alpha = {
        level: agreement.krippendorff_alpha(twice, level, values=scale) if units else float("nan")
        for level in ("ordinal", "interval")
    }
    return AgreementBlock(
        scenario,
        units,
        pairs,
        alpha["ordinal"],
        alpha["interval"],
        all_estimates(data, scale),
        graded_once=graded_once,
    )


def assessor_agreement(*, study: Study) -> list[AgreementBlock]:
    """Per scenario, then overall (last, scenario None): weighted kappa (linear, quadratic) with the confusion
    matrix for every pair of assessors on the documents both graded, and Krippendorff's alpha (ordinal,
    interval) over all assessors; and every coefficient with its interval and method, for each pair
    (PairAgreement.estimates) and over all assessors (AgreementBlock.estimates; agreement_estimates.py).
    Machine assessors count here as assessors like any other."""
    members = list(study.assessors.select_related("user").order_by("id"))
    scale = study.grade_values()
    # Documents graded once too: the figures over all assessors leave them out and say how many.
    rows = [row for row in document_grades(study, machines=True) if row.grades]
    blocks = []
    for scenario in study.scenarios.order_by("id"):
        mine = [row for row in rows if row.pool_document.pool.scenario_id == scenario.id]
        blocks.append(_agreement_block(scenario, mine, members, scale))
    blocks.append(_agreement_block(None, rows, members, scale))
    return blocks


@dataclass
class ParticipantAgreement(Texts):
    label: str  # participant code or scenario code
    n: int  # documents the participant graded that the reference grades
    percent: float
    kappa_linear: float
    kappa_quadratic: float
    missed: int  # shown to them, relevant in the reference, not judged relevant by them
    matrix: np.ndarray | None = None  # rows: their grades, columns: the reference's

    @cached_property
    def estimates(self) -> list[AgreementEstimate]:
        """Every coefficient of a pair of assessors (PAIR_COEFFICIENTS: percent agreement, Cohen's kappa,
        Gwet's AC1/AC2, Scott's pi, Brennan-Prediger), their grades against the reference's, with intervals;
        computed when a page or the API asks (the exclusion rule reads only the point figures above, which
        these equal)."""
        if self.matrix is None:
            return []
        return pair_estimates(self.matrix)

    def estimate_rows(self):
        """(estimate, its texts) for the page, in PAIR_COEFFICIENTS' order."""
        return [(estimate, estimate_texts(estimate)) for estimate in self.estimates]

    def _by_name(self, coefficient: str) -> dict[str, str]:
        for estimate in self.estimates:
            if estimate.coefficient == coefficient:
                return estimate_texts(estimate)
        return {"estimate": "n/a", "interval": "n/a", "se": "n/a", "p": "n/a"}

    def kappa_intervals(self) -> dict[str, str]:
        """The 95% intervals of kappa (linear, quadratic) as page texts."""
        return {
            weighting: self._by_name(f"Cohen's kappa ({weighting} weights)")["interval"]
            for weighting in ("linear", "quadratic")
        }

    def gwet_texts(self) -> dict[str, dict[str, str]]:
        """Gwet's AC1 and quadratic AC2 (estimate, interval...) as page texts: the coefficients that stay
        readable when nearly every document is non-relevant (docs/assessing.md, the prevalence paradox)."""
        return {
            "ac1": self._by_name("Gwet's AC1"),
            "ac2": self._by_name("Gwet's AC2 (quadratic weights)"),
        }


def participant_reference_agreement(
    *, study: Study, version: ReferenceVersion | None = None
) -> tuple[ReferenceVersion | None, list[ParticipantAgreement], list[ParticipantAgreement]]:
    """Participants' own grades against a reference version (the newest by default): per participant and
    per scenario. Documents the reference does not grade are left out; a retaken scenario counts its
    latest judgment."""
    version = version or study.reference_versions.order_by("-number").first()
    if version is None:
        return None, [], []
    reference = {
        (topic, document_id): grade
        for topic, document_id, grade in version.judgments.values_list("topic_id", "document_id", "grade")
    }
    scale = study.grade_values()
    latest: dict[tuple, tuple] = {}
    for code, scenario_code, topic, document_id, grade, updated in Judgment.objects.filter(
        session__assignment__participant__study=study
    ).values_list(
        "session__assignment__participant__code",
        "session__assignment__scenario__code",
        "session__assignment__scenario__topic_id",
        "document_id",
        "grade",
        "updated_at",
    ):
        key = (code, scenario_code, topic, document_id)
        if key not in latest or latest[key][1] < updated:
            latest[key] = (grade, updated)
    judged_relevant = {key for key, (grade, _updated) in latest.items() if grade >= 1}
    pairs_by: dict[str, dict[str, list]] = {"participant": defaultdict(list), "scenario": defaultdict(list)}
    for (code, scenario_code, topic, document_id), (grade, _updated) in latest.items():
        if (topic, document_id) in reference:
            pair = (grade, reference[(topic, document_id)])
            pairs_by["participant"][code].append(pair)
            pairs_by["scenario"][scenario_code].append(pair)
    missed: dict[str, Counter[str]] = {"participant": Counter(), "scenario": Counter()}
    shown = set(
        ShownResult.objects.filter(query__session__assignment__participant__study=study).values_list(
            "query__session__assignment__participant__code",
            "query__session__assignment__scenario__code",
            "query__session__assignment__scenario__topic_id",
            "document_id",
        )
    )
    for code, scenario_code, topic, document_id in shown:
        if (
            reference.get((topic, document_id), 0) >= 1
            and (code, scenario_code, topic, document_id) not in judged_relevant
        ):
            missed["participant"][code] += 1
            missed["scenario"][scenario_code] += 1

    def table(kind, labels):
        out = []
        for label in labels:
            pairs = pairs_by[kind].get(label, [])
            a = [p for p, _r in pairs]
            b = [r for _p, r in pairs]
            matrix = agreement.confusion_matrix(a, b, scale)
            out.append(
                ParticipantAgreement(
                    label,
                    len(pairs),
                    agreement.percent_agreement(a, b),
                    agreement.kappa_from_matrix(matrix, "linear"),
                    agreement.kappa_from_matrix(matrix, "quadratic"),
                    missed[kind][label],
                    matrix,
                )
            )
        return out

    participants = list(study.participants.order_by("enrolment_index").values_list("code", flat=True))
    scenarios = list(study.scenarios.order_by("id").values_list("code", flat=True))
    return version, table("participant", participants), table("scenario", scenarios)
