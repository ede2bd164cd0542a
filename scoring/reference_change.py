"""The study's conclusion under two reference versions (people only against people plus a machine
assessor), read for the page /scoring/<slug>/reference-change/.

The default run's parameters score the study's sessions in its analysis population against each version,
here and now: nothing is stored, so neither the default run nor what "current" means (freshness.py) change.
A chunk's sessions are loaded once (scoring.services.chunks.chunk_load, as a pass loads them) and scored
twice, once per version's judgments. The math is scoring.lib.conclusion_change."""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from studies.models import ReferenceJudgment, ReferenceVersion, Study
from studies.population import Population

from .lib.conclusion_change import ConclusionChange, conclusion_change
from .lib.session import encode_sessions, score_sessions
from .models import QUERY_DEPTH, ScoringRun
from .selectors import ChartFilters, run_scores
from .services import CHUNK_SIZE, run_params
from .services.chunks import Chunk, chunk_load

SUMMARIES_COMPARED = {"final": "final sDCG", "normalized_final": "normalized final sDCG"}


class ReferenceChangeError(ValueError):
    """A version asked for that is not a number (400) or not the study's (404); the message names the
    parameter."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def version_asked(study: Study, query, parameter: str) -> ReferenceVersion | None:
    """The version `parameter` (from, to) names by number ("3" or "v3"); None when not given."""
    text = (query.get(parameter) or "").strip()
    if not text:
        return None
    digits = text[1:] if text[:1] in ("v", "V") else text
    if not digits.isdigit() or len(digits) > 9:
        raise ReferenceChangeError(f"{parameter}: {text[:40]!r} is not a reference version number", 400)
    version = study.reference_versions.filter(number=int(digits)).first()
    if version is None:
        raise ReferenceChangeError(f"{parameter}: the study has no reference version {int(digits)}", 404)
    return version


def versions_compared(study: Study, query) -> tuple[ReferenceVersion | None, ReferenceVersion | None]:
    """(from, to): as asked, else the latest version made without machine grades and the latest made with
    them (its provenance says so: studies.assessment.machine.has_machine_grades)."""
    before, after = version_asked(study, query, "from"), version_asked(study, query, "to")
    versions = list(study.reference_versions.order_by("-number"))
    if after is None:
        after = next((v for v in versions if v.machine_grades), None)
    if before is None:
        before = next((v for v in versions if not v.machine_grades and v != after), None)
    return before, after


@dataclass
class ReferenceChange:
    run: ScoringRun
    before: ReferenceVersion
    after: ReferenceVersion
    population: Population
    sessions: int
    participants: int
    changes: dict[str, ConclusionChange]  # summary -> the conclusion change on it
    # (system, scenario) -> (mean final sDCG under before, under after, sessions), for the chart
    cells: dict[tuple[str, str], tuple[float, float, int]]


def reference_change_figure(result: ReferenceChange) -> tuple[dict, list[str]]:
    """A Plotly figure: each system x scenario cell's mean final sDCG under the "to" version against under
    the "from" version, one trace per system, with the diagonal (no change); and its notes."""
    before, after = f"v{result.before.number}", f"v{result.after.number}"
    systems = sorted({system for system, _scenario in result.cells})
    top = max([0.0, *(max(b, a) for b, a, _n in result.cells.values())]) * 1.05 or 1.0
    data: list[dict] = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": [0, top],
            "y": [0, top],
            "name": "no change",
            "line": {"dash": "dot", "color": "#999"},
            "hoverinfo": "skip",
        }
    ]
    for system in systems:
        cells = sorted((scenario, value) for (s, scenario), value in result.cells.items() if s == system)
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "name": f"system {system}",
                "x": [value[0] for _scenario, value in cells],
                "y": [value[1] for _scenario, value in cells],
                "text": [scenario for scenario, _value in cells],
                "textposition": "top center",
                "customdata": [value[2] for _scenario, value in cells],
                "hovertemplate": "%{text}: %{x:.3f} → %{y:.3f} (%{customdata} sessions)<extra></extra>",
            }
        )
    layout = {
        "title": {"text": f"Mean final sDCG per system × scenario: {before} against {after}"},
        "xaxis": {"title": {"text": f"under {before}"}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": f"under {after}"}, "rangemode": "tozero"},
        "height": 420,
    }
    change = result.changes["final"]
    notes = [
        f"Population: {result.population.label()}; n = {result.sessions} sessions of {result.participants} "
        "participants.",
        f"Kendall's tau between the cells' means: {change.tau_cells.text()}. Above the diagonal: higher "
        f"under {after}.",
    ]
    return {"data": data, "layout": layout}, notes


def _qrels(version: ReferenceVersion, topics: set[str]) -> dict[str, dict[int, int]]:
    qrels: dict[str, dict[int, int]] = defaultdict(dict)
    for topic, document_id, grade in ReferenceJudgment.objects.filter(
        version=version, topic_id__in=topics
    ).values_list("topic_id", "document_id", "grade"):
        qrels[topic][document_id] = grade
    return dict(qrels)


def _scored(run: ScoringRun, chunk: Chunk, qrels) -> dict[str, np.ndarray]:
    """The chunk's sessions scored with the run's parameters against `qrels` (as chunks.chunk_score)."""
    depth = max(run.top, QUERY_DEPTH, max((d for qs in chunk.scanned or [] for d in qs), default=0))
    batch = encode_sessions(chunk.topics, chunk.results, qrels, depth=depth, scanned_to=chunk.scanned)
    scores = score_sessions(batch, run_params(run), curves=False)
    return {summary: np.asarray(getattr(scores, summary), dtype=np.float64) for summary in SUMMARIES_COMPARED}


def reference_change(
    *,
    run: ScoringRun,
    before: ReferenceVersion,
    after: ReferenceVersion,
    population: Population,
    filters: ChartFilters | None = None,
) -> ReferenceChange:
    """Score against both versions, with `run`'s parameters, exactly the sessions the dashboard shows for
    `filters` (the population's, by default): the run's scored sessions in the population, without those on
    unjudged scenarios or of excluded participants, so the verdict's n is the dashboard's n."""
    study = run.study
    filters = filters or ChartFilters(population=population)
    session_ids = sorted(run_scores(run, filters).session_id.tolist())
    # A probe with the run's parameters, never saved: the reference version is set per load, and no other
    # measure is asked for (only the sDCG summaries are compared).
    probe = copy.copy(run)
    probe.judgments, probe.reference_version_id, probe.measures = (
        ScoringRun.Judgments.REFERENCE,
        before.pk,
        [],
    )
    labels: list[tuple] = []
    values: dict[str, dict[str, list[float]]] = {"before": defaultdict(list), "after": defaultdict(list)}
    for start in range(0, len(session_ids), CHUNK_SIZE):
        chunk = chunk_load(probe, session_ids[start : start + CHUNK_SIZE])
        if not chunk.sessions:
            continue
        topics = set(chunk.topics)
        for name, version in (("before", before), ("after", after)):
            scored = _scored(run, chunk, _qrels(version, topics))
            for summary, array in scored.items():
                values[name][summary].extend(array.tolist())
        labels.extend(chunk.sessions)
    systems = dict(study.systems.values_list("pk", "code"))
    scenarios = dict(study.scenarios.values_list("pk", "code"))
    system_labels = [systems[row[3]] for row in labels]
    blocks = [row[1] for row in labels]
    scenario_labels = [scenarios[row[2]] for row in labels]
    cells: dict[tuple[str, str], list] = defaultdict(lambda: [0.0, 0.0, 0])
    for system, scenario, first, second in zip(
        system_labels, scenario_labels, values["before"]["final"], values["after"]["final"], strict=True
    ):
        cell = cells[(system, scenario)]
        cell[0], cell[1], cell[2] = cell[0] + first, cell[1] + second, cell[2] + 1
    changes = {}
    if labels:
        for summary, label in SUMMARIES_COMPARED.items():
            changes[summary] = conclusion_change(
                values["before"][summary],
                values["after"][summary],
                system_labels,
                blocks,
                scenario_labels,
                names=(f"v{before.number}", f"v{after.number}"),
                summary=label,
            )
    means = {key: (total[0] / total[2], total[1] / total[2], total[2]) for key, total in cells.items()}
    return ReferenceChange(run, before, after, population, len(labels), len(set(blocks)), changes, means)
