"""The simulated searcher's behaviour, pure: its traits, drawn once per searcher around calibrated centres,
the per-query draws (scan depth, clicks, dwell, query length, reformulation), and a replay of a whole session
on logged result lists, with which the centres are fitted to a real log (`fit`).

The demo's searcher (studies/simulation/participants.py) makes the same draws through the real services; the
replay here is the same session logic on the log's own result lists and grades, so a calibration needs no
database and no search engine:

- a searcher's patience is 1 + int(Exp(patience_mean)) queries, at most `max_queries`;
- a session ends when its need is met (one or two documents of the top grade, or two to four of the top two
  grades, as the searcher judged them) or when the patience runs out;
- on each query it reads snippets down to a depth of round(Exp(scan_mean)), at least 1, at most the page
  (10), and opens a snippet with `click_relevant` if the document is relevant (grade > 0), else
  `click_other`; a document it judged already is not opened again; with nothing found on the first page it
  sometimes turns to the second (`page_two`);
- scan_mean and the two click rates of each searcher are the centres times U(1 - spread, 1 + spread): people
  differ.

The log supplies the rest directly: dwell (lognormal on the log's dwell times), the first query's length (the
log's distribution) and how queries change (the shares of adding, swapping, dropping terms and starting anew,
and the share of added terms taken from titles and snippets already shown).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from .session_log_stats import LoggedQuery, LoggedSession, Tolerance, behaviour_statistics, terms

PAGE = 10
CHANGES = ("add", "swap", "drop", "new")  # a simulated searcher never sends the same query twice in a row
FITTED = ("patience_mean", "scan_mean", "click_relevant", "click_other")


class CalibrationError(ValueError):
    """A log or a calibration file that cannot give or hold the parameters; the message says which part."""


@dataclass(frozen=True)
class SearcherParameters:
    patience_mean: float = 2.2
    scan_mean: float = 5.5
    click_relevant: float = 0.75
    click_other: float = 0.125
    spread: float = 0.4
    max_queries: int = 11
    misjudge: tuple[float, float] = (0.1, 0.3)  # a judgment off by one grade: each searcher's rate, uniform
    page_two: tuple[float, float] = (0.0, 0.25)
    dwell_log_mean: float = math.log(25.0)  # seconds of reading a document, lognormal
    dwell_log_sd: float = 0.6  # fitted on the log's quartiles (direct_estimates)
    first_query_terms: Mapping[str, float] = field(default_factory=lambda: {"2": 0.5, "3": 0.5})
    reformulation: Mapping[str, float] = field(
        default_factory=lambda: {"add": 0.5, "swap": 0.3, "drop": 0.2, "new": 0.0}
    )
    learned_terms: float = 0.0  # share of added terms taken from titles and snippets already shown

    @classmethod
    def from_dict(cls, data: Mapping) -> SearcherParameters:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise CalibrationError(f"parameters: unknown name(s) {', '.join(sorted(unknown))}")
        values = dict(data)
        for name in ("misjudge", "page_two"):
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)


@dataclass(frozen=True)
class SearcherTraits:
    """One simulated searcher, drawn once."""

    scan_mean: float  # how deep they usually read a result list
    click_relevant: float  # chance of opening a relevant result's snippet
    click_other: float
    misjudge: float  # chance a judgment is off by one grade
    patience: int  # queries before giving up
    page_two: float  # chance of turning to the second page when nothing good was on the first


def traits_draw(parameters: SearcherParameters, rng: random.Random) -> SearcherTraits:
    p = parameters

    def around(centre: float) -> float:
        return centre * rng.uniform(1 - p.spread, 1 + p.spread)

    return SearcherTraits(
        scan_mean=max(1.0, around(p.scan_mean)),
        click_relevant=min(1.0, around(p.click_relevant)),
        click_other=min(1.0, around(p.click_other)),
        misjudge=rng.uniform(*p.misjudge),
        patience=min(p.max_queries, 1 + int(rng.expovariate(1 / p.patience_mean))),
        page_two=rng.uniform(*p.page_two),
    )


def scan_depth(traits: SearcherTraits, rng: random.Random, available: int) -> int:
    return max(1, min(available, round(rng.expovariate(1 / traits.scan_mean))))


def need_draw(rng: random.Random) -> tuple[int, int]:
    """The session's need: documents of the top grade, or of the top two grades, that satisfy it."""
    return rng.choice((1, 2, 2)), rng.choice((2, 3, 4))


def dwell_draw(parameters: SearcherParameters, rng: random.Random) -> float:
    """Seconds reading an opened document: lognormal, at least 1 s and at most 10 minutes."""
    return min(600.0, max(1.0, rng.lognormvariate(parameters.dwell_log_mean, parameters.dwell_log_sd)))


def first_query_length(parameters: SearcherParameters, rng: random.Random) -> int:
    lengths = sorted(parameters.first_query_terms, key=int)
    return int(rng.choices(lengths, weights=[parameters.first_query_terms[k] for k in lengths])[0])


def change_draw(parameters: SearcherParameters, rng: random.Random) -> str:
    """How the next query differs from the last: "add", "swap", "drop" or "new"."""
    weights = [parameters.reformulation.get(kind, 0.0) for kind in CHANGES]
    return rng.choices(CHANGES, weights=weights)[0] if sum(weights) > 0 else "add"


def perceived(rng: random.Random, grade: int, rate: float, max_grade: int) -> int:
    if rng.random() < rate:
        grade += rng.choice((-1, 1))
    return min(max_grade, max(0, grade))


# --- the replay on logged lists -----------------------------------------------------------------------------

ResultList = Sequence[tuple[str, int]]  # (document id, grade) by rank


def replay_session(
    parameters: SearcherParameters,
    rng: random.Random,
    lists: Sequence[ResultList],
    pool: Sequence[ResultList],
    max_grade: int = 3,
) -> LoggedSession:
    """One simulated searcher's session on logged result lists: its k-th query shows the logged session's k-th
    list, and a list drawn from `pool` (the topic's lists) once those run out."""
    traits = traits_draw(parameters, rng)
    need_high, need_fair = need_draw(rng)
    found_high = found_fair = 0
    judged: set[str] = set()
    queries = []
    for number in range(traits.patience):
        results = lists[number] if number < len(lists) else rng.choice(pool)
        first = list(results[:PAGE])
        depth = scan_depth(traits, rng, len(first))
        clicks: list[int] = []
        dwells: list[float | None] = []
        found = _scan(parameters, traits, rng, first[:depth], 1, judged, clicks, dwells, max_grade)
        more = list(results[PAGE : 2 * PAGE])
        if not found and len(first) >= PAGE and more and rng.random() < traits.page_two:
            seen = more[: rng.randint(1, len(more))]
            found = _scan(parameters, traits, rng, seen, PAGE + 1, judged, clicks, dwells, max_grade)
        queries.append(LoggedQuery("", tuple(d for d, _ in results), tuple(clicks), tuple(dwells)))
        found_high += sum(g >= max_grade for g in found)
        found_fair += sum(g >= max_grade - 1 for g in found)
        if found_high >= need_high or found_fair >= need_fair:
            break
    return LoggedSession("", tuple(queries))


def _scan(parameters, traits, rng, results, first_rank, judged, clicks, dwells, max_grade) -> list[int]:
    given = []
    for offset, (doc, grade) in enumerate(results):
        rate = traits.click_relevant if grade > 0 else traits.click_other
        if doc in judged or rng.random() > rate:
            continue
        clicks.append(first_rank + offset)
        dwells.append(dwell_draw(parameters, rng))
        given.append(perceived(rng, max(0, grade), traits.misjudge, max_grade))
        judged.add(doc)
    return given


@dataclass(frozen=True)
class ReplayCorpus:
    """The log's sessions as result lists with grades (grades above `max_grade` are capped, below 0 and
    unjudged documents are 0), and each topic's lists."""

    sessions: tuple[tuple[str, tuple[ResultList, ...]], ...]
    by_topic: Mapping[str, tuple[ResultList, ...]]
    max_grade: int = 3

    @classmethod
    def from_log(
        cls, sessions: Sequence[LoggedSession], grades: Mapping[str, Mapping[str, int]], max_grade: int = 3
    ) -> ReplayCorpus:
        replayed = []
        by_topic: dict[str, list[ResultList]] = {}
        for session in sessions:
            topic_grades = grades.get(session.topic, {})
            lists = tuple(
                tuple((doc, min(max_grade, max(0, topic_grades.get(doc, 0)))) for doc in query.shown)
                for query in session.queries
            )
            if lists:
                replayed.append((session.topic, lists))
                by_topic.setdefault(session.topic, []).extend(lists)
        if not replayed:
            raise CalibrationError("the log has no session with a query to replay")
        return cls(tuple(replayed), {t: tuple(v) for t, v in by_topic.items()}, max_grade)


def replay_statistics(
    parameters: SearcherParameters, corpus: ReplayCorpus, *, seed: int, sessions: int
) -> dict:
    """The behaviour figures of `sessions` simulated sessions, each on a logged session drawn at random."""
    rng = random.Random(seed)
    simulated = []
    for _ in range(sessions):
        topic, lists = rng.choice(corpus.sessions)
        simulated.append(replay_session(parameters, rng, lists, corpus.by_topic[topic], corpus.max_grade))
    return behaviour_statistics(simulated)


def distance(simulated: Mapping, target: Mapping, tolerance: Tolerance) -> float:
    """How far simulated figures are from the log's, in units of the tolerance (the fit minimises it)."""
    total = 0.0
    for name in tolerance.figures:
        got, want = simulated[name], target[name]
        if got["mean"] is None:
            return math.inf
        total += ((got["mean"] - want["mean"]) / (tolerance.mean_relative * want["mean"])) ** 2
        for key in ("q25", "q50", "q75", "q90"):
            total += 0.5 * ((got[key] - want[key]) / tolerance.quantile_absolute) ** 2
    share = simulated["share_no_click"]["mean"] - target["share_no_click"]["mean"]
    return total + (share / tolerance.share_absolute) ** 2


GRIDS: Mapping[str, np.ndarray] = {
    "patience_mean": np.round(np.arange(0.5, 4.01, 0.1), 3),
    "scan_mean": np.round(np.arange(1.0, 12.01, 0.25), 3),
    "click_relevant": np.round(np.arange(0.2, 0.951, 0.025), 3),
    "click_other": np.round(np.arange(0.02, 0.601, 0.02), 3),
}


def _with(parameters: SearcherParameters, name: str, value: float) -> SearcherParameters:
    return replace(parameters, **{name: value})  # type: ignore[arg-type]  # name is one of FITTED: floats


def fit(
    start: SearcherParameters,
    corpus: ReplayCorpus,
    target: Mapping,
    tolerance: Tolerance,
    *,
    seed: int,
    sessions: int,
    rounds: int = 3,
    progress: Callable[[str], None] | None = None,
) -> SearcherParameters:
    """The FITTED centres minimising `distance` to the log, by coordinate search on GRIDS (each round tries
    every value of one centre with the others fixed), on the same seeded draws for every candidate."""
    best = start
    best_distance = distance(replay_statistics(best, corpus, seed=seed, sessions=sessions), target, tolerance)
    for round_number in range(rounds):
        for name in FITTED:
            for value in GRIDS[name]:
                candidate = _with(best, name, float(value))
                figures = replay_statistics(candidate, corpus, seed=seed, sessions=sessions)
                score = distance(figures, target, tolerance)
                if score < best_distance:
                    best, best_distance = candidate, score
            if progress:
                progress(
                    f"round {round_number + 1}, {name} = {getattr(best, name):g}: "
                    f"distance {best_distance:.2f}"
                )
    return best


# --- what the log gives directly -------------------------------------------------------------------------


def direct_estimates(sessions: Sequence[LoggedSession], statistics: Mapping) -> dict:
    """The parameters read straight off the log: dwell, first query length, reformulation, learned terms."""
    dwells = sorted(d for s in sessions for q in s.queries for d in q.dwells if d is not None and d > 0)
    if len(dwells) < 4:
        raise CalibrationError("the log has fewer than four clicks with both times: no dwell to fit")
    # Fitted on the median and the quartiles rather than on the mean of the logs: a click closed within a
    # second (a misclick, or the log's rounding) would otherwise drag the whole distribution down.
    q25, q50, q75 = np.quantile(dwells, (0.25, 0.5, 0.75))
    mean, sd = math.log(q50), (math.log(q75) - math.log(q25)) / 1.3490
    firsts = [len(terms(s.queries[0].text)) for s in sessions if s.queries]
    counts = {str(k): firsts.count(k) / len(firsts) for k in sorted(set(firsts)) if k > 0}
    shares = statistics["reformulation"]
    changed = sum(shares[k] or 0.0 for k in CHANGES)
    if not changed:
        raise CalibrationError("the log has no reformulation: no session has two different queries")
    return {
        "dwell_log_mean": round(mean, 4),
        "dwell_log_sd": round(sd, 4),
        "first_query_terms": {k: round(v / sum(counts.values()), 4) for k, v in counts.items()},
        "reformulation": {k: round((shares[k] or 0.0) / changed, 4) for k in CHANGES},
        "learned_terms": round(statistics["learned_terms"]["mean"] or 0.0, 4),
    }


# --- the committed file ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    parameters: SearcherParameters
    log: Mapping  # behaviour_statistics of the log
    simulated: Mapping  # behaviour_statistics of the replay with `parameters`
    tolerance: Tolerance
    seed: int
    sessions: int  # simulated sessions in `simulated`
    source: str = ""

    def as_dict(self) -> dict:
        parameters = asdict(self.parameters)
        for name in ("misjudge", "page_two"):
            parameters[name] = list(parameters[name])
        return {
            "source": self.source,
            "parameters": parameters,
            "fitted": list(FITTED),
            "seed": self.seed,
            "sessions": self.sessions,
            "tolerance": self.tolerance.as_dict(),
            "log": self.log,
            "simulated": self.simulated,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Calibration:
        try:
            return cls(
                parameters=SearcherParameters.from_dict(data["parameters"]),
                log=data["log"],
                simulated=data["simulated"],
                tolerance=Tolerance.from_dict(data["tolerance"]),
                seed=int(data["seed"]),
                sessions=int(data["sessions"]),
                source=str(data.get("source", "")),
            )
        except KeyError as missing:
            raise CalibrationError(f"the calibration has no {missing.args[0]!r}") from None


def calibration_read(path: str | Path) -> Calibration:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CalibrationError(f"{path}: {error}") from None
    return Calibration.from_dict(data)


def calibration_write(calibration: Calibration, path: str | Path) -> None:
    Path(path).write_text(
        json.dumps(calibration.as_dict(), indent=1, sort_keys=False) + "\n", encoding="utf-8"
    )
