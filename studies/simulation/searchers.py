"""Simulated searchers with the strategies of the simulation literature (SimIIR's family: Maxwell &
Azzopardi's query generators and stopping decision makers), for planning a study (scoring/planning,
docs/planning.md).

`participants.SimulatedParticipant` (studies/simulation/participants.py) is the
demo's searcher and stays as it is; `StrategicParticipant` is the same
person (the same services, profile and need) with each part of the behaviour chosen by a `Strategy`:

queries (`Strategy.queries`)
    "scenario"  the demo's: content words of the scenario at the length of the log's first queries, then
                add, swap, drop a word or start anew in the log's shares, a new word as often as in the log
                from the titles and snippets read (the calibrated searcher, docs/planning.md);
    "terms"     the scenario's terms ranked by frequency (the title counts twice), queries of `query_length`
                terms: the top ones as a pivot and the next unused term appended in turn (SimIIR's tri-term
                generator with a pivot);
    "relevant"  as "terms", with terms of the topic's relevant documents (reference grade > 0) ranked after
                the scenario's: a searcher who learns the vocabulary of what it is looking for.
stopping within a result list (`Strategy.stopping`)
    "patience"      the demo's: a depth drawn per query (exponential, the profile's mean);
    "fixed"         examine `depth` snippets;
    "satisfaction"  stop after `satisfied_after` documents judged relevant in this list;
    "frustration"   stop after `frustrated_after` snippets that were not relevant (not opened, or judged 0);
    "combined"      satisfaction or frustration, whichever comes first.
    Every rule also stops at the end of the page (10 results), or at `depth` at most.
stopping a session
    the need (one or two highly relevant documents, or two to four fairly relevant) as in the demo; at most
    `max_queries` queries (None: the profile's patience); and, with `time_limit` seconds, a budget spent by
    the actions' costs (`Costs`: issuing a query, reading a snippet, reading a document, judging): the
    session ends when the next action would overrun it ("timed_out" if the study has a time limit, else
    "gave_up"). The clock of the logged events moves by the same costs.
judging (`Strategy.agreement`)
    None: the profile's misjudging rate (the demo's); a share in (0, 1]: the rate of a grade off by one is
    calibrated (`misjudge_rate`) so that the expected share of judgments equal to the reference grade is the
    target, on the topic's reference grades.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from scoring.lib import searcher_model
from studies.models import Participant, SearchSession
from studies.participation.way.form_steps import post_task_save
from studies.participation.way.steps import (
    document_view_log,
    judgment_record,
    query_log,
    scan_mark_record,
    session_end,
)
from studies.simulation.participants import STOPWORDS, SimulatedParticipant, content_words

QUERY_STRATEGIES = ("scenario", "terms", "relevant")
STOPPING_RULES = ("patience", "fixed", "satisfaction", "frustration", "combined")
PAGE = 10
WORD = re.compile(r"[a-z][a-z-]{2,}")


class StrategyError(ValueError):
    """A strategy parameter out of range; the message names it."""


@dataclass(frozen=True)
class Costs:
    """Seconds each action takes (a time-limited searcher's budget, and the logged events' clock)."""

    query: float = 10.0  # thinking of and typing a query
    snippet: float = 2.0  # reading one result's title and snippet
    document: float = 20.0  # reading an opened document
    judgment: float = 3.0  # choosing its grade

    def check(self) -> None:
        for name in ("query", "snippet", "document", "judgment"):
            if not getattr(self, name) >= 0:
                raise StrategyError(f"costs.{name}: seconds must be >= 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class Strategy:
    queries: str = "scenario"
    query_length: int = 3  # terms per query ("terms", "relevant")
    stopping: str = "patience"
    depth: int = 10  # "fixed": snippets examined; every rule: at most this many
    satisfied_after: int = 2  # "satisfaction", "combined": relevant documents before leaving the list
    frustrated_after: int = 5  # "frustration", "combined": non-relevant snippets before leaving the list
    max_queries: int | None = None  # None: the profile's patience (1..11 queries)
    time_limit: float | None = None  # seconds of actions per session; None: no budget
    costs: Costs = field(default_factory=Costs)
    agreement: float | None = None  # target share of judgments equal to the reference grade

    def __post_init__(self) -> None:
        if self.queries not in QUERY_STRATEGIES:
            raise StrategyError(f"queries: {self.queries!r} is not one of {', '.join(QUERY_STRATEGIES)}")
        if self.stopping not in STOPPING_RULES:
            raise StrategyError(f"stopping: {self.stopping!r} is not one of {', '.join(STOPPING_RULES)}")
        for name in ("query_length", "depth", "satisfied_after", "frustrated_after"):
            if int(getattr(self, name)) < 1:
                raise StrategyError(f"{name}: at least 1, got {getattr(self, name)}")
        if self.max_queries is not None and self.max_queries < 1:
            raise StrategyError(f"max_queries: at least 1, got {self.max_queries}")
        if self.time_limit is not None and not self.time_limit > 0:
            raise StrategyError(f"time_limit: seconds > 0, got {self.time_limit}")
        if self.agreement is not None and not 0 < self.agreement <= 1:
            raise StrategyError(f"agreement: a share in (0, 1], got {self.agreement}")
        self.costs.check()

    @classmethod
    def from_dict(cls, data: Mapping | None) -> Strategy:
        data = dict(data or {})
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise StrategyError(f"unknown strategy parameter(s): {', '.join(sorted(unknown))}")
        costs = data.pop("costs", None) or {}
        if not isinstance(costs, Mapping) or set(costs) - set(Costs.__dataclass_fields__):
            raise StrategyError("costs: a mapping of query, snippet, document, judgment to seconds")
        return cls(costs=Costs(**{k: float(v) for k, v in costs.items()}), **data)


# --- queries ------------------------------------------------------------------------------------------------


def ranked_terms(text: str, *, title: str = "") -> list[str]:
    """The content words of a scenario by frequency (the title's count twice), ties in order of appearance."""
    words = content_words(f"{title} {text}")
    tokens = [w.strip("-") for w in WORD.findall(f"{title} {title} {text}".lower())]
    counts = Counter(t for t in tokens if t in set(words))
    order = {w: i for i, w in enumerate(words)}
    return sorted(words, key=lambda w: (-counts[w], order[w]))


def document_terms(texts: Sequence[str], *, exclude: Sequence[str] = (), limit: int = 20) -> list[str]:
    """Terms of the relevant documents by the number of them that use the term (then by total count)."""
    df: Counter = Counter()
    tf: Counter = Counter()
    for text in texts:
        words = [w.strip("-") for w in WORD.findall(text.lower())]
        words = [w for w in words if w and w not in STOPWORDS]
        tf.update(words)
        df.update(set(words))
    skip = set(exclude)
    ranked = sorted((w for w in df if w not in skip), key=lambda w: (-df[w], -tf[w], w))
    return ranked[:limit]


def pivot_queries(terms: Sequence[str], length: int, count: int) -> list[list[str]]:
    """`count` queries of `length` terms: the first length - 1 terms as a pivot, then each further term in
    turn (when the terms run out the pivot shrinks, so queries are never repeated while new ones exist)."""
    terms = list(dict.fromkeys(terms)) or ["search"]
    queries: list[list[str]] = []
    pivot = max(0, min(length - 1, len(terms) - 1))
    while len(queries) < count:
        head, rest = terms[:pivot], terms[pivot:]
        for term in rest:
            queries.append(head + [term])
            if len(queries) == count:
                return queries
        if pivot == 0:  # every single term used: start again
            queries.extend([t] for t in terms[: count - len(queries)])
            return queries[:count]
        pivot -= 1
    return queries


# --- stopping within a list ---------------------------------------------------------------------------------


def stop_examining(
    strategy: Strategy, *, examined: int, relevant: int, not_relevant: int, drawn_depth: int
) -> bool:
    """Whether the searcher leaves the result list before the next snippet, after `examined` snippets of which
    `relevant` were judged relevant and `not_relevant` were not (not opened, or judged 0)."""
    if examined >= strategy.depth:
        return True
    rule = strategy.stopping
    if rule == "patience":
        return examined >= drawn_depth
    if rule == "fixed":
        return False  # the depth above
    satisfied = relevant >= strategy.satisfied_after
    frustrated = not_relevant >= strategy.frustrated_after
    if rule == "satisfaction":
        return satisfied
    if rule == "frustration":
        return frustrated
    return satisfied or frustrated


# --- judging ------------------------------------------------------------------------------------------------


def change_share(grades: Sequence[int], max_grade: int) -> float:
    """The share of these reference grades that a one-grade slip (up or down, equally likely, kept on the
    scale 0..max_grade) would change: 1 for an inner grade, 1/2 at either end."""
    if max_grade < 1:
        raise StrategyError("a scale of one grade cannot be misjudged")
    if not grades:
        return 0.5
    return sum(1.0 if 0 < g < max_grade else 0.5 for g in grades) / len(grades)


def misjudge_rate(agreement: float, grades: Sequence[int], max_grade: int) -> float:
    """The slip rate p for which the expected share of judgments equal to the reference is `agreement`:
    agreement = 1 - p * change_share. StrategyError when no rate in [0, 1] reaches it."""
    share = change_share(grades, max_grade)
    rate = (1.0 - agreement) / share
    if rate > 1:
        raise StrategyError(
            f"agreement: {agreement:g} is below what one-grade slips can give on these grades "
            f"(at least {1 - share:.3f})"
        )
    return rate


def perceived(rng: random.Random, grade: int, rate: float, max_grade: int) -> int:
    if rng.random() < rate:
        grade += rng.choice((-1, 1))
    return min(max_grade, max(0, grade))


# --- the searcher -------------------------------------------------------------------------------------------


class StrategicParticipant(SimulatedParticipant):
    """The demo's simulated participant with its behaviour chosen by a Strategy (the module's docstring)."""

    def __init__(
        self,
        participant: Participant,
        reference: Mapping[str, Mapping[str, int]],
        rng: random.Random,
        strategy: Strategy,
        relevant_texts: Mapping[str, Sequence[str]] | None = None,
    ):
        super().__init__(participant, reference, rng)
        self.strategy = strategy
        self.relevant_texts = relevant_texts or {}
        self.budget: float | None = None

    def _spend(self, seconds: float) -> bool:
        """Spend an action's cost; False (nothing spent) if it would overrun the session's time budget."""
        if self.budget is not None:
            if seconds > self.budget:
                return False
            self.budget -= seconds
        self.clock.now = self.clock.now + timedelta(seconds=seconds)
        return True

    def _queries(self, scenario, count: int) -> list[list[str]] | None:
        strategy = self.strategy
        if strategy.queries == "scenario":
            return None
        terms = ranked_terms(scenario.text, title=scenario.title)
        if strategy.queries == "relevant":
            terms = terms + document_terms(self.relevant_texts.get(scenario.topic_id, ()), exclude=terms)
        return pivot_queries(terms, strategy.query_length, count)

    def _search(self, session: SearchSession, scenario) -> None:
        rng, profile, strategy = self.rng, self.profile, self.strategy
        grades = self.reference.get(scenario.topic_id, {})
        self.rate = (
            profile.misjudge
            if strategy.agreement is None
            else misjudge_rate(strategy.agreement, list(grades.values()), self.max_grade)
        )
        self.budget = strategy.time_limit
        words = content_words(f"{scenario.title} {scenario.text}") or ["search"]
        query_words = words[: searcher_model.first_query_length(self.parameters, rng)]
        need_high, need_fair = searcher_model.need_draw(rng)
        self.shown_words = Counter()
        found_high = found_fair = 0
        patience = strategy.max_queries or profile.patience
        planned = self._queries(scenario, patience)
        judged: set[str] = set()
        reason = SearchSession.EndReason.GAVE_UP
        # The budget's end is the study's time limit only if it has one; otherwise the searcher gives up.
        out = (
            SearchSession.EndReason.TIMED_OUT
            if self.participant.study.time_limit_minutes
            else SearchSession.EndReason.GAVE_UP
        )
        for number in range(patience):
            if not self._spend(strategy.costs.query):
                reason = out
                break
            text = " ".join(planned[number] if planned else query_words)
            ack = query_log(participant=self.participant, session=session, text=text, **self._event())
            results = (ack.get("results") or [])[:PAGE]
            drawn = searcher_model.scan_depth(profile, rng, len(results))
            found_here, out_of_time = self._examine(session, ack["query"], results, grades, judged, drawn)
            for grade in found_here:
                found_high += grade >= self.max_grade
                found_fair += grade >= self.max_grade - 1
            if found_high >= need_high or found_fair >= need_fair:
                reason = SearchSession.EndReason.SATISFIED
                break
            if out_of_time:
                reason = out
                break
            if not planned:
                query_words = self._reformulate(query_words, words)
        session_end(participant=self.participant, session=session, reason=reason, **self._event())
        if not self._gold(session, scenario, self._event):
            return
        post_task_save(
            participant=self.participant,
            session=session,
            answers={
                "search_went_well": 4 if reason == SearchSession.EndReason.SATISFIED else rng.randint(1, 3)
            },
            **self._event(),
        )

    def _examine(self, session, query_position: int, results: list, grades, judged: set[str], drawn: int):
        """Read snippets one at a time under the stopping rule; open, read and judge some. Returns the grades
        given and whether the time budget ran out."""
        rng, profile, strategy, costs = self.rng, self.profile, self.strategy, self.strategy.costs
        given: list[int] = []
        relevant = not_relevant = examined = deepest = 0
        out_of_time = False
        for result in results:
            if stop_examining(
                strategy, examined=examined, relevant=relevant, not_relevant=not_relevant, drawn_depth=drawn
            ):
                break
            if not self._spend(costs.snippet):
                out_of_time = True
                break
            examined += 1
            deepest = result["rank"]
            self.shown_words.update(content_words(f"{result.get('title', '')} {result.get('snippet', '')}"))
            doc = result["doc"]
            looks_relevant = grades.get(doc, 0) > 0
            if doc in judged or rng.random() > (
                profile.click_relevant if looks_relevant else profile.click_other
            ):
                not_relevant += doc not in judged
                continue
            if not self._spend(costs.document + costs.judgment):
                out_of_time = True
                break
            document_view_log(
                participant=self.participant,
                session=session,
                action="open",
                doc=doc,
                query_position=query_position,
                rank=result["rank"],
                **self._event(),
            )
            grade = perceived(rng, grades.get(doc, 0), self.rate, self.max_grade)
            document_view_log(
                participant=self.participant,
                session=session,
                action="close",
                doc=doc,
                query_position=query_position,
                rank=result["rank"],
                dwell_ms=int(costs.document * 1000),
                **self._event(),
            )
            judgment_record(
                participant=self.participant, session=session, doc=doc, grade=grade, **self._event()
            )
            judged.add(doc)
            given.append(grade)
            if grade > 0:
                relevant += 1
            else:
                not_relevant += 1
        if deepest:
            scan_mark_record(
                participant=self.participant,
                session=session,
                query_position=query_position,
                rank=deepest,
                **self._event(),
            )
        return given, out_of_time

    def _event(self) -> dict:
        # The clock moves by the actions' costs (_spend), not by the demo's random seconds per event.
        self.sequence += 1
        return {
            "client_event_id": f"sim-{self.participant.code}-{self.sequence}",
            "sequence": self.sequence,
            "client_time": self.clock.now.isoformat(),
        }


def participants_simulate_with(
    *,
    participants,
    reference: Mapping[str, Mapping[str, int]],
    strategy: Strategy,
    relevant_texts: Mapping[str, Sequence[str]] | None = None,
    seed: int = 2008,
) -> int:
    """As `simulation.participants_simulate`, with a strategy; returns the number of sessions worked."""
    sessions = 0
    for participant in participants:
        rng = random.Random(f"{seed}-{participant.code}")
        StrategicParticipant(participant, reference, rng, strategy, relevant_texts).run()
        sessions += participant.assignments.count()
    return sessions
