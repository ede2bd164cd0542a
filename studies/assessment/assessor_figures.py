"""Per-assessor figures (docs/assessing.md, "Assessor figures"), for people and machine assessors
alike: how much each judged, how fast, whether their grading drifted over their work, and how they agree with
the reference, with a confusion matrix and every pair coefficient with its interval
(agreement_estimates.pair_estimates, the figures of a pair of assessors).

The reference is the adjudicated grades (AdjudicationDecision) when the study has any, else the newest
reference version; `AssessorFiguresReport.reference_label` says which. An assessor's grades and the
adjudicated ones are not independent (an agreed or in-turn decision is some assessor's own grade): the page
says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from scoring.lib import agreement
from scoring.lib.reliability import AgreementEstimate, estimate_cells
from studies.assessment.agreement_estimates import agreement_rows, estimate_texts, pair_estimates
from studies.assessment.pages import Texts
from studies.models import AdjudicationDecision, AssessorJudgment, PoolDocument, Study, StudyAssessor

# A gap between two consecutive judgments longer than this is a break, not time spent on a judgment.
BREAK_SECONDS = 600
NAN = float("nan")


@dataclass
class AssessorFigures(Texts):
    membership: StudyAssessor
    judgments: int
    # Time per judgment, from the gaps between consecutive judgments (created_at) under BREAK_SECONDS.
    gaps: int
    breaks: int
    median_seconds: float
    q1_seconds: float
    q3_seconds: float
    # Drift: the first and the last third of their judgments in time order.
    first_mean: float
    last_mean: float
    mean_drift: float
    first_agreement: float  # share of exact agreement with the reference, on the documents it grades
    last_agreement: float
    agreement_drift: float
    # Against the reference: rows their grades, columns the reference's, both in the scale's order.
    reference_n: int
    matrix: np.ndarray | None = None
    estimates: list[AgreementEstimate] = field(default_factory=list)
    scale: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.membership.user.username

    @property
    def kind(self) -> str:
        return "machine" if self.membership.is_machine else "person"

    def matrix_rows(self):
        """(their grade, counts by the reference's grade) for the page."""
        return list(zip(self.scale, self.matrix.tolist(), strict=True)) if self.matrix is not None else []

    def estimate_rows(self):
        return [(estimate, estimate_texts(estimate)) for estimate in self.estimates]

    @property
    def time_text(self) -> str:
        if np.isnan(self.median_seconds):
            return "n/a"
        return f"{self.median_seconds:.0f} s (IQR {self.q1_seconds:.0f}–{self.q3_seconds:.0f} s)"


@dataclass
class AssessorFiguresReport:
    reference_label: str  # "adjudicated grades", "reference version 3", or "" without a reference
    scale: list[int]
    assessors: list[AssessorFigures]
    break_seconds: int = BREAK_SECONDS


def assessment_reference(study: Study) -> tuple[str, dict[int, int]]:
    """(which reference, pool document id -> its grade): the adjudicated grades if there are any, else the
    newest reference version's grades of the pool documents (grades outside the study's scale left out)."""
    decisions = dict(
        AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study).values_list(
            "pool_document_id", "grade"
        )
    )
    if decisions:
        return "adjudicated grades", decisions
    version = study.reference_versions.order_by("-number").first()
    if version is None:
        return "", {}
    scale = set(study.grade_values())
    graded = {
        (topic, document_id): grade
        for topic, document_id, grade in version.judgments.values_list("topic_id", "document_id", "grade")
        if grade in scale
    }
    reference = {}
    for pool_document_id, topic, document_id in PoolDocument.objects.filter(
        pool__scenario__study=study
    ).values_list("id", "pool__scenario__topic_id", "document_id"):
        if (topic, document_id) in graded:
            reference[pool_document_id] = graded[(topic, document_id)]
    return f"reference version {version.number}", reference


def time_per_judgment(times: list) -> tuple[int, int, float, float, float]:
    """(gaps counted, breaks left out, median, first quartile, third quartile) in seconds, of the gaps between
    consecutive judgment times; gaps over BREAK_SECONDS are breaks."""
    gaps = np.diff(np.array([t.timestamp() for t in sorted(times)], dtype=float))
    kept = gaps[gaps <= BREAK_SECONDS]
    if not kept.size:
        return 0, int(gaps.size), NAN, NAN, NAN
    q1, median, q3 = np.percentile(kept, [25, 50, 75])
    return int(kept.size), int(gaps.size - kept.size), float(median), float(q1), float(q3)


def _exact_share(pairs: list[tuple[int, int]]) -> float:
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else NAN


def _mean(values: list[int]) -> float:
    return float(np.mean(values)) if values else NAN


def assessor_figures(*, study: Study) -> AssessorFiguresReport:
    """Every assessor's figures (people, then machines, each in invitation order)."""
    scale = study.grade_values()
    label, reference = assessment_reference(study)
    members = sorted(
        study.assessors.select_related("user", "llm").order_by("id"), key=lambda m: (m.is_machine, m.id)
    )
    work: dict[int, list[tuple]] = {member.user_id: [] for member in members}
    for user_id, pool_document_id, grade, created_at in (
        AssessorJudgment.objects.filter(pool_document__pool__scenario__study=study)
        .order_by("created_at", "id")
        .values_list("assessor_id", "pool_document_id", "grade", "created_at")
    ):
        if user_id in work:
            work[user_id].append((pool_document_id, grade, created_at))
    figures = []
    for member in members:
        judgments = work[member.user_id]
        gaps, breaks, median, q1, q3 = time_per_judgment([created for _pd, _g, created in judgments])
        third = len(judgments) // 3
        first, last = (judgments[:third], judgments[-third:]) if third else ([], [])

        def against(part):
            return [(grade, reference[pd]) for pd, grade, _t in part if pd in reference]

        first_agreement, last_agreement = _exact_share(against(first)), _exact_share(against(last))
        first_mean = _mean([grade for _pd, grade, _t in first])
        last_mean = _mean([grade for _pd, grade, _t in last])
        pairs = against(judgments)
        matrix = agreement.confusion_matrix([a for a, _r in pairs], [r for _a, r in pairs], scale)
        figures.append(
            AssessorFigures(
                member,
                len(judgments),
                gaps,
                breaks,
                median,
                q1,
                q3,
                first_mean,
                last_mean,
                last_mean - first_mean,
                first_agreement,
                last_agreement,
                last_agreement - first_agreement,
                len(pairs),
                matrix if pairs else None,
                pair_estimates(matrix) if pairs else [],
                scale,
            )
        )
    return AssessorFiguresReport(label, scale, figures)


# The agreement CSV: agreement_estimates.CSV_HEADER's columns as they were, then which comparison a row is.
COMPARISONS = {
    "all": "all assessors",
    "pair": "assessor pair",
    "reference": "assessor against reference",
}


def agreement_csv_rows(blocks, report: AssessorFiguresReport) -> Iterator[list]:
    """The agreement CSV (header first): agreement_rows of the blocks with a `comparison` column, then each
    assessor against the reference (scenario "all", first the assessor, second the reference's label)."""
    rows = agreement_rows(blocks)
    yield [*next(rows), "comparison"]
    for row in rows:
        yield [*row, COMPARISONS["pair" if row[1] else "all"]]
    for figures in report.assessors:
        for estimate in figures.estimates:
            yield [
                "all",
                figures.name,
                report.reference_label,
                *estimate_cells(estimate),
                COMPARISONS["reference"],
            ]
