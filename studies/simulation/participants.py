"""Simulated participants for the demo study, in the manner of the simulation literature (e.g. SimIIR).

A simulated searcher goes through the same services as a person in the browser (consent, questionnaire,
queries, result pages, document views, judgments, scan marks, stopping), so the demo's logs, sessions and
scores are made exactly as a real study's would be. Its behaviour:

- calibrated: the behaviour's parameters are fitted to the TREC 2012 Session Track log (queries per session,
  clicks per query, click ranks and the deepest click of a query, dwell, query length, reformulation) and
  committed in searcher_calibration.json (studies/simulation/calibration.py, `scoring.lib.searcher_model`,
  docs/planning.md "Calibrated searchers"), so the demo needs no shared data;
- queries: the first takes content words of the scenario text, as many as the log's first queries have
  (mostly two to four); each reformulation adds a word, swaps one, drops one or starts anew, in the log's
  shares, the new word taken as often as in the log from titles and snippets already shown, else from the
  scenario (SimIIR's "smarter" query generators draw on the topic description the same way);
- scanning: reads snippets down the list to a depth drawn per query (round(Exp) of the searcher's own mean),
  sometimes turns to page 2, and marks where it stopped scanning;
- clicking and judging: opens a document more readily when it is relevant, judges it against the reference
  grade with noise (a grade off by one now and then), since people misjudge and overlook;
- time: each action takes a person's seconds on the participant's clock (PACE: reading the consent and the
  scenario, typing a query 5-15 s, scanning before a click, reading a document for the log's dwell times,
  choosing a grade),
  drawn from the participant's seeded generator; the events carry these client times, so the sessions' times
  and durations (docs/time-model.md) are the simulated person's, not the instant the server took;
- stopping: satisfied once it has found what its need calls for (one or two highly relevant documents, or
  two to four fairly relevant ones),
  otherwise it gives up after a patience drawn per searcher (at most 11 queries), which spreads the number of
  queries per session like the log's (many one-query sessions, a long tail).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from scoring.lib import searcher_model
from scoring.lib.searcher_model import SearcherTraits
from studies.errors import Refused
from studies.kernel.gold import gold_pending
from studies.models import Participant, SearchSession
from studies.participation.way import gold as gold_documents
from studies.participation.way.form_steps import (
    consent_record,
    post_task_save,
    questionnaire_save,
    session_start,
)
from studies.participation.way.steps import (
    attention_record,
    document_view_log,
    exposure_record,
    judgment_record,
    query_log,
    results_page_log,
    scan_mark_record,
    session_end,
)
from studies.questionnaires.items import usable_items
from studies.simulation.calibration import searcher_parameters

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few find for from further had has have
    having he her here hers how i if in into is it its itself just may me might more most must my need no nor
    not now of off on once only or other our out over own same shall she should so some such than that the
    their them then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your what's there's given obtained available problem problems
    work studies study results data method methods use used using case cases known known? type
    types""".split()
)
WORD = re.compile(r"[a-z][a-z-]{2,}")


def content_words(text: str) -> list[str]:
    """The scenario's words a searcher might type, in the order they appear, each once."""
    seen: dict[str, None] = {}
    for word in WORD.findall(text.lower()):
        word = word.strip("-")
        if word and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


SearcherProfile = SearcherTraits  # one simulated participant's traits, drawn once


def profile_draw(rng: random.Random) -> SearcherProfile:
    """A searcher's traits around the calibrated centres (searcher_calibration.json)."""
    return searcher_model.traits_draw(searcher_parameters(), rng)


# Seconds (low, high) an action takes before its event, on the simulated participant's clock: what a person
# would spend reading, typing, scanning, judging (a document's reading time is its dwell, drawn apart).
PACE = {
    "consent": (20.0, 90.0),  # reading the consent text
    "questionnaire": (30.0, 120.0),
    "session_start": (15.0, 60.0),  # reading the scenario
    "query": (5.0, 15.0),  # thinking of and typing a query
    "results_page": (4.0, 12.0),  # scanning the first page, then turning it
    "document_open": (2.0, 8.0),  # scanning snippets down to the one opened
    "document_close": (0.2, 1.0),  # after the dwell: going back to the list
    "judgment": (2.0, 6.0),  # choosing a grade
    "scan_mark": (1.0, 3.0),
    "session_end": (2.0, 8.0),
    "gold": (20.0, 60.0),  # reading and judging the scenario's two gold documents
    "post_task": (10.0, 40.0),
}


@dataclass
class _Clock:
    """Client times move on as a person's would: seconds to type, to read, to judge."""

    now: datetime = field(default_factory=timezone.now)

    def tick(self, rng: random.Random, low: float, high: float) -> datetime:
        self.now = self.now + timedelta(seconds=rng.uniform(low, high))
        return self.now


class SimulatedParticipant:
    def __init__(
        self, participant: Participant, reference: Mapping[str, Mapping[str, int]], rng: random.Random
    ):
        self.participant = participant
        self.reference = reference  # {topic_id: {external_id: grade}}
        self.rng = rng
        self.parameters = searcher_parameters()
        self.profile = profile_draw(rng)
        self.shown_words: Counter = Counter()  # content words of the titles and snippets read this session
        self.clock = _Clock()
        self.pace = (1.0, 4.0)  # the seconds the next event's action takes (_next sets it from PACE)
        self.action_ms = 0  # how long the last event's action took, on the participant's clock
        self.session_started = self.clock.now  # the session's start on the participant's clock
        self.sequence = 0
        self.max_grade = max(participant.study.grade_values())
        self.stopped = (
            False  # screened out (a gold pair judged wrongly past the preset's limit): nothing more
        )

    def _event(self) -> dict:
        self.sequence += 1
        before = self.clock.now
        at = self.clock.tick(self.rng, *self.pace)
        self.action_ms = int((at - before).total_seconds() * 1000)
        return {
            "client_event_id": f"sim-{self.participant.code}-{self.sequence}",
            "sequence": self.sequence,
            # As a browser sends it (participation/events/event_checks.py reads ISO text or epoch
            # milliseconds).
            "client_time": at.isoformat(),
        }

    def _now(self) -> dict:
        """An event at the clock's present moment, without a draw of the main generator: the reports of what
        was on screen leave every other draw of a simulated study as it was (a tenth of a second later, so
        the log's order stays the timeline's)."""
        self.clock.now += timedelta(milliseconds=100)
        self.sequence += 1
        return {
            "client_event_id": f"sim-{self.participant.code}-{self.sequence}",
            "sequence": self.sequence,
            "client_time": self.clock.now.isoformat(),
        }

    def _next(self, action: str) -> dict:
        """The next event's fields, its action taking PACE[action] seconds (one draw, as before)."""
        self.pace = PACE[action]
        return self._event()

    def run(self) -> None:
        participant, rng = self.participant, self.rng
        consent_record(
            participant=participant,
            consent_version=participant.study.consent_version,
            **self._next("consent"),
        )
        answers = {
            "search_engine_years": max(0, round(rng.gauss(7.2, 2.8))),
            "domain_years": max(0, round(rng.gauss(21.4, 7.6))),
            "search_skill": min(5, max(1, round(rng.gauss(2.4, 0.9)))),
        }
        own = usable_items(participant.study.questionnaire)
        if own:  # the study's own questionnaire (built on its set-up page), answered item by item
            answers = answers_to(own, random.Random(f"answers-{participant.code}"))
        questionnaire_save(participant=participant, answers=answers, **self._next("questionnaire"))
        for assignment in participant.assignments.select_related("scenario", "system").order_by("position"):
            session = session_start(
                participant=participant, assignment=assignment, **self._next("session_start")
            )
            self.session_started = self.clock.now
            self._search(session, assignment.scenario)
            if self.stopped:
                break

    def _search(self, session: SearchSession, scenario) -> None:
        rng, profile = self.rng, self.profile
        grades = self.reference.get(scenario.topic_id, {})
        words = content_words(f"{scenario.title} {scenario.text}") or ["search"]
        query_words = words[: searcher_model.first_query_length(self.parameters, rng)]
        # The need, drawn per session: one or two highly relevant documents, or two to four fairly relevant.
        need_high, need_fair = searcher_model.need_draw(rng)
        self.shown_words = Counter()
        found_high = found_fair = 0
        patience = profile.patience
        judged: set[str] = set()
        reason = SearchSession.EndReason.GAVE_UP
        for _ in range(patience):
            event = self._next("query")
            ack = query_log(
                participant=self.participant,
                session=session,
                text=" ".join(query_words),
                formulation=self._formulation(session, event),
                **event,
            )
            results = ack.get("results") or []
            depth = searcher_model.scan_depth(profile, rng, len(results))
            found_here = self._scan(session, ack["query"], results[:depth], grades, judged)
            if (
                not found_here
                and len(results) >= 10
                and ack.get("total", 0) > 10
                and rng.random() < profile.page_two
            ):
                page = results_page_log(
                    participant=self.participant,
                    session=session,
                    query_position=ack["query"],
                    page=2,
                    **self._next("results_page"),
                )
                more = page.get("results") or []
                found_here = self._scan(
                    session, ack["query"], more[: rng.randint(1, len(more) or 1)], grades, judged
                )
            for grade in found_here:
                found_high += grade >= self.max_grade
                found_fair += grade >= self.max_grade - 1
            if found_high >= need_high or found_fair >= need_fair:
                reason = SearchSession.EndReason.SATISFIED
                break
            query_words = self._reformulate(query_words, words)
        self._attention(session)
        session_end(participant=self.participant, session=session, reason=reason, **self._next("session_end"))
        if not self._gold(session, scenario, lambda: self._next("gold")):
            return
        post_task_save(
            participant=self.participant,
            session=session,
            answers=self._post_task_answers(reason, session),
            **self._next("post_task"),
        )

    def _gold(self, session: SearchSession, scenario, event) -> bool:
        """The scenario's gold documents, when the study has them: judged as the reference grades them (the
        pair is the clearest of the topic's documents, so no misjudging noise; the simulation never stalls on
        it). False when the answer screened the participant out."""
        pair = gold_pending(participant=self.participant, session=session, scenario=scenario)
        if pair is None:
            return True
        grades = self.reference.get(scenario.topic_id, {})
        ack = gold_documents.gold_answer_record(
            participant=self.participant,
            session=session,
            grades={
                doc.external_id: min(self.max_grade, max(0, grades.get(doc.external_id, grade)))
                for doc, grade in ((pair.relevant, pair.relevant_grade), (pair.off_topic, 0))
            },
            **event(),
        )
        self.stopped = bool(ack.get("screened_out"))
        return not self.stopped

    def _post_task_answers(self, reason: str, session: SearchSession) -> dict:
        # One draw of the main generator whatever the questionnaire, so a study's other draws stay the same.
        went_well = 4 if reason == SearchSession.EndReason.SATISFIED else self.rng.randint(1, 3)
        own = usable_items(self.participant.study.post_task_questionnaire)
        if own:  # e.g. NASA-TLX added on the set-up page
            return answers_to(own, random.Random(f"post-task-{self.participant.code}-{session.pk}"))
        return {"search_went_well": went_well}

    def _scan(self, session, query_position: int, results: list, grades, judged: set[str]) -> list[int]:
        """Read snippets down to the scan depth, open and judge some; returns the grades given."""
        rng, profile = self.rng, self.profile
        given = []
        deepest = 0
        opened: set[int] = set()
        for result in results:
            deepest = max(deepest, result["rank"])
            self.shown_words.update(content_words(f"{result.get('title', '')} {result.get('snippet', '')}"))
            doc = result["doc"]
            relevant = grades.get(doc, 0) > 0
            if doc in judged or rng.random() > (profile.click_relevant if relevant else profile.click_other):
                continue
            document_view_log(
                participant=self.participant,
                session=session,
                action="open",
                doc=doc,
                query_position=query_position,
                rank=result["rank"],
                **self._next("document_open"),
            )
            opened.add(result["rank"])
            dwell = searcher_model.dwell_draw(self.parameters, rng)
            self.clock.tick(self.rng, dwell, dwell)
            grade = self._perceived(grades.get(doc, 0))
            document_view_log(
                participant=self.participant,
                session=session,
                action="close",
                doc=doc,
                query_position=query_position,
                rank=result["rank"],
                dwell_ms=int(dwell * 1000),
                **self._next("document_close"),
            )
            judgment_record(
                participant=self.participant, session=session, doc=doc, grade=grade, **self._next("judgment")
            )
            judged.add(doc)
            given.append(grade)
        if results:
            self._exposure(session, query_position, results, opened)
        if deepest:
            scan_mark_record(
                participant=self.participant,
                session=session,
                query_position=query_position,
                rank=deepest,
                **self._next("scan_mark"),
            )
        return given

    def _formulation(self, session, event: dict) -> dict:
        """How long the query took to write, as formulation.js reports it: thinking, then typing, within the
        seconds the query's action took (PACE: never longer than the time since the previous event, or a query
        at 0:07 was "written in 9.9 s"), from a generator of its own."""
        look = random.Random(f"formulation-{self.participant.code}-{session.pk}-{event['sequence']}")
        submit_ms = min(look.randint(3_000, 12_000), max(self.action_ms, 1_000))
        return {"first_key_ms": look.randint(500, submit_ms // 2), "submit_ms": submit_ms}

    def _exposure(self, session, query_position: int, results: list, opened: set[int]) -> None:
        """What the page's exposure.js would report of the ranks scanned: each on screen from when the eye
        reached it, seen for a second or two (longer when opened), the opened ones hovered; the list scrolled
        down to the deepest. A generator of its own (the demo's replay and charts come alive)."""
        look = random.Random(
            f"exposure-{self.participant.code}-{session.pk}-{query_position}-{results[0]['rank']}"
        )
        items, start = [], 0
        for result in results:
            rank = result["rank"]
            seen = look.randint(800, 2500) + (look.randint(500, 1500) if rank in opened else 0)
            hover = (look.randint(300, 1500), 1) if rank in opened else (0, 0)
            items.append([rank, start, seen, 1000, *hover, start + seen])  # on screen from start, seen ms
            start += look.randint(300, 700)
        deepest_on_page = (results[-1]["rank"] - 1) % 10 + 1
        exposure_record(
            participant=self.participant,
            session=session,
            query_position=query_position,
            page=(results[0]["rank"] - 1) // 10 + 1,
            items=items,
            scroll_permille=min(1000, 100 * deepest_on_page),
            **self._now(),
        )

    def _attention(self, session: SearchSession) -> None:
        """A third of the simulated searchers look away once (another window, 5-30 s) and a fifth go idle
        once (30-90 s), as the page's attention.js would report it."""
        look = random.Random(f"attention-{self.participant.code}-{session.pk}")
        # On the participant's own clock: the session's server-timeline start is minutes behind it (every
        # earlier step's simulated seconds), which put idle spans past the session's end in the replay.
        duration_ms = int((self.clock.now - self.session_started).total_seconds() * 1000)
        spans = []
        for kind, share, low, high in (("blur", 1 / 3, 5_000, 30_000), ("idle", 1 / 5, 30_000, 90_000)):
            if look.random() < share and duration_ms > high:
                spans.append([kind, look.randint(0, duration_ms - high), look.randint(low, high)])
        if spans:
            attention_record(participant=self.participant, session=session, spans=spans, **self._now())

    def _perceived(self, grade: int) -> int:
        if self.rng.random() < self.profile.misjudge:
            grade += self.rng.choice((-1, 1))
        return min(self.max_grade, max(0, grade))

    def _reformulate(self, current: list[str], words: list[str]) -> list[str]:
        """The next query: add a word, swap one, drop one or start anew, in the log's shares; a new word comes
        from the titles and snippets read this session as often as the log's searchers took theirs from what
        they were shown (`learned_terms`), otherwise from the scenario's unused words."""
        rng, parameters = self.rng, self.parameters
        kind = searcher_model.change_draw(parameters, rng)
        if kind == "drop" and len(current) < 2:
            kind = "add"

        def fresh(exclude: list[str]) -> str | None:
            learned = [w for w, _ in self.shown_words.most_common(12) if w not in exclude]
            unused = [w for w in words if w not in exclude]
            if learned and (not unused or rng.random() < parameters.learned_terms):
                return rng.choice(learned[:6])
            return rng.choice(unused[:6]) if unused else None

        if kind == "new":
            length = searcher_model.first_query_length(parameters, rng)
            query: list[str] = []
            for _ in range(length):
                word = fresh(current + query)
                if word is not None:
                    query.append(word)
            return query or current + [rng.choice(words)]
        if kind == "drop":
            dropped = list(current)
            dropped.pop(rng.randrange(len(dropped)))
            return dropped
        word = fresh(current)
        if word is None:
            return current + [rng.choice(words)]
        if kind == "swap" and current:
            swapped = list(current)
            swapped[rng.randrange(len(swapped))] = word
            return swapped
        return current + [word]


def answers_to(items: list[dict], rng: random.Random) -> dict:
    """Plausible answers to questionnaire items of any type (studies/questionnaires/items.py)."""
    answers: dict[str, Any] = {}
    for item in items:
        kind, low, high = item.get("kind", "text"), item.get("min"), item.get("max")
        if kind in ("scale", "integer"):
            low = 0 if low is None else low
            answers[item["name"]] = rng.randint(low, max(low, 10 if high is None else high))
        elif kind == "number":
            low = 0.0 if low is None else float(low)
            answers[item["name"]] = round(
                rng.uniform(low, max(low, 10.0 if high is None else float(high))), 1
            )
        elif kind == "choice":
            answers[item["name"]] = rng.choice(item["choices"])
        elif item.get("required", True):
            answers[item["name"]] = "no comment"
    return answers


def first_search_start(*, participant: Participant, answers: Mapping) -> SearchSession:
    """A participant who consents, answers the questionnaire and starts their first scenario, through the same
    services as the pages: the starting point of the load benchmark and the fault tests."""
    consent_record(
        participant=participant,
        consent_version=participant.study.consent_version,
        client_event_id=f"ready-consent-{participant.pk}",
    )
    questionnaire_save(
        participant=participant, answers=answers, client_event_id=f"ready-questionnaire-{participant.pk}"
    )
    assignment = participant.assignments.order_by("position").first()
    if assignment is None:
        raise Refused("This participant has no scenarios to start.")
    return session_start(
        participant=participant, assignment=assignment, client_event_id=f"ready-start-{participant.pk}"
    )


def participants_simulate(
    *, participants, reference: Mapping[str, Mapping[str, int]], seed: int = 2008
) -> int:
    """Play each participant through their whole order; returns the number of sessions worked."""
    sessions = 0
    for participant in participants:
        # One generator per participant, seeded by its code, so the demo is the same on every machine.
        rng = random.Random(f"{seed}-{participant.code}")
        SimulatedParticipant(participant, reference, rng).run()
        sessions += participant.assignments.count()
    return sessions
