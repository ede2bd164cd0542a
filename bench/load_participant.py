"""A load-benchmark participant (bench/load.py): an asyncio task that behaves like static/js/participant.js,
and `play`, which runs them all against the server for the run's duration."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections import Counter, defaultdict

from load_http import Connection, HttpError
from load_report import percentile
from load_server import cpu_seconds, own_cpu_seconds
from load_study import VOCABULARY

LATER_SECONDS = 3.0  # participant.js LATER_MS: how long events the page does not wait on may wait to be sent


class Stats:
    def __init__(self):
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter = Counter()
        self.events_acked = 0
        self.events_refused = 0
        self.acked_by_type: Counter = Counter()
        self.resent_batches = 0
        self.measuring = False
        self.window_events = 0
        self.window_requests = 0
        self.window_latency: list[float] = []
        self.loop_lag: list[float] = []


class Participant:
    def __init__(self, player: dict, port: int, stats: Stats, rng: random.Random, args):
        self.player, self.stats, self.rng, self.args = player, stats, rng, args
        self.http = Connection(port, timeout=args.request_timeout)
        self.events_url = f"/p/{player['token']}/events/"
        self.home_url = f"/p/{player['token']}/"
        self.seq = player.get("seq", 0)  # a later round of bench/load_paired.py goes on numbering
        self.outbox: list[dict] = []
        self.sent: set[str] = set()
        self.acked: dict[str, dict] = {}
        self.later_at: float | None = None  # when the events that need no answer go, if no request takes them
        self.look = random.Random(f"exposure-{player['pk']}")  # exposure and attention reports
        self.types: dict[str, str] = {}  # event id -> type

    async def pause(self, low: float, high: float):
        """A participant's pause; the page's timer sends events waiting in the outbox when it is due."""
        end = time.monotonic() + self.rng.uniform(low, high) * self.args.think
        while self.later_at is not None and self.later_at <= end:
            await asyncio.sleep(max(0.0, self.later_at - time.monotonic()))
            self.later_at = None
            await self.flush()
        await asyncio.sleep(max(0.0, end - time.monotonic()))

    def enqueue(self, kind: str, data: dict, later: bool = False) -> str:
        """Queue an event; `later`: one the page does not wait on (participant.js LATER_MS, scaled by --think
        like every other pause)."""
        self.seq += 1
        self.player["seq"] = self.seq
        event = {
            "id": f"L-{self.player['pk']}-{self.seq}-{uuid.uuid4().hex[:8]}",
            "seq": self.seq,
            "type": kind,
            "session": self.player["session"],
            "time": int(time.time() * 1000),
            "data": data,
        }
        self.outbox.append(event)
        self.sent.add(event["id"])
        self.types[event["id"]] = kind
        if later and self.later_at is None:
            self.later_at = time.monotonic() + LATER_SECONDS * self.args.think
        return event["id"]

    async def home(self):
        started = time.perf_counter()
        try:
            status, _ = await self.http.request("GET", self.home_url)
        except HttpError as exc:
            if self.stats.measuring:
                self.stats.errors[f"GET /p/<token>/: {exc}"] += 1
            return
        self._record("GET /p/<token>/ (search page)", started, status)

    def _record(self, endpoint: str, started: float, status: int) -> None:
        if self.stats.measuring:
            took = time.perf_counter() - started
            self.stats.latency[endpoint].append(took)
            self.stats.window_latency.append(took)
            self.stats.window_requests += 1
            if status >= 400:
                self.stats.errors[f"{endpoint}: HTTP {status}"] += 1

    async def flush(self, resend: bool = False) -> bool:
        """POST the outbox (at most one batch); keep what was not acknowledged. True when all went."""
        batch = self.outbox[: self.args.batch]
        if not batch:
            return True
        self.later_at = None  # what was waiting goes with this request
        label = (
            "POST events (query/page)"
            if any(e["type"] in ("query", "results_page") for e in batch)
            else "POST events (open/close/judge/mark)"
        )
        body = json.dumps({"events": batch}).encode()
        headers = {
            "Content-Type": "application/json",
            "X-CSRFToken": self.http.cookies.get("csrftoken", ""),
            "Referer": f"http://127.0.0.1:{self.http.port}{self.home_url}",
        }
        # A re-send: the first answer was "lost", the same batch goes again.
        for _ in range(2 if resend else 1):
            started = time.perf_counter()
            try:
                status, data = await self.http.request("POST", self.events_url, body, headers)
            except HttpError as exc:
                if self.stats.measuring:
                    self.stats.errors[f"{label}: {exc}"] += 1
                return False
            self._record(label, started, status)
            if status != 200:
                return False
        if resend:
            self.stats.resent_batches += 1
        acks = json.loads(data)["acks"]
        done = set()
        for ack in acks:
            if ack.get("id") and (ack.get("ok") or ack.get("refused") or ack.get("error")):
                done.add(ack["id"])
                if ack["id"] not in self.acked:
                    self.acked[ack["id"]] = ack
                    if ack.get("ok"):
                        if self.stats.measuring:
                            self.stats.window_events += 1
                        self.stats.events_acked += 1
                        self.stats.acked_by_type[self.types.get(ack["id"], "?")] += 1
                    else:
                        self.stats.events_refused += 1
        self.outbox = [e for e in self.outbox if e["id"] not in done]
        return not self.outbox

    async def send_and_wait(self, event_id: str, stop_at: float) -> dict | None:
        """Flush until `event_id` is acknowledged (bounded by count and by the end of the run)."""
        for attempt in range(20):
            if attempt and time.monotonic() >= stop_at:
                return None
            await self.flush(resend=self.rng.random() < self.args.resend)
            if event_id in self.acked:
                return self.acked[event_id]
            await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
        return None

    async def run(self, stop_at: float):
        cycle = 0
        reload_every = getattr(self.args, "reload_every", 5)  # 0: never (the paired runs: events only)
        while time.monotonic() < stop_at:
            cycle += 1
            if reload_every and cycle % reload_every == 0:
                await self.home()  # a reload now and then (the page is the start of its step)
            words = self.rng.sample(VOCABULARY, self.rng.randint(1, 3))
            query_event = self.enqueue("query", {"text": " ".join(words)})
            ack = await self.send_and_wait(query_event, stop_at)
            if not ack or not ack.get("ok"):
                await self.pause(0.2, 0.5)
                continue
            results = ack.get("results") or []
            await self.pause(0.2, 0.6)
            if results and ack.get("total", 0) > 10 and self.rng.random() < 0.3:
                page = self.enqueue("results_page", {"query_event": query_event, "page": 2})
                page_ack = await self.send_and_wait(page, stop_at)
                results = (page_ack or {}).get("results") or results
                await self.pause(0.2, 0.5)
            for result in self.rng.sample(results, min(len(results), self.rng.randint(1, 3))):
                if time.monotonic() >= stop_at:
                    break
                # The results carry the documents' text: the page shows it at once, the open waits in the
                # outbox.
                self.enqueue(
                    "document_open",
                    {"doc": result["doc"], "rank": result["rank"], "query_event": query_event},
                    later=True,
                )
                started = time.monotonic()
                await self.pause(0.3, 1.0)
                self.enqueue(
                    "document_close",
                    {
                        "doc": result["doc"],
                        "rank": result["rank"],
                        "query_event": query_event,
                        "dwell_ms": int((time.monotonic() - started) * 1000),
                    },
                    later=True,
                )
                if self.rng.random() < 0.7:
                    self.enqueue(
                        "judgment",
                        {"doc": result["doc"], "grade": self.rng.choice(self.player["grades"])},
                        later=True,
                    )
                await self.pause(0.1, 0.3)
            if results and self.args.exposure:
                self.report_exposure(query_event, results)
            if results and self.rng.random() < 0.5:
                self.enqueue(
                    "scan_mark",
                    {"query_event": query_event, "rank": self.rng.choice(results)["rank"]},
                    later=True,
                )
            await self.pause(0.2, 0.6)

    def report_exposure(self, query_event: str, results: list[dict]) -> None:
        """What participant.js's exposure.js and attention.js send: a report of the page's ranks on
        screen as the participant leaves it, and now and then a stretch away. From a generator of their own,
        so the actions' draws are those of a run without them (--no-exposure)."""
        look = self.look
        shown = results[: look.randint(3, len(results))]
        items = [
            [
                r["rank"],
                300 * i,
                look.randint(400, 3000),
                look.choice((500, 800, 1000)),
                look.choice((0, 0, 400)),
                0,
            ]
            for i, r in enumerate(shown)
        ]
        self.enqueue(
            "exposure",
            {
                "query_event": query_event,
                "page": 1,
                "items": items,
                "scroll_permille": look.randint(300, 1000),
            },
            later=True,
        )
        if look.random() < 0.25:
            self.enqueue(
                "attention",
                {"spans": [["blur", look.randint(0, 60_000), look.randint(500, 9000)]]},
                later=True,
            )

    async def drain(self, seconds: float):
        deadline = time.monotonic() + seconds
        while self.outbox and time.monotonic() < deadline:
            if not await self.flush():
                await asyncio.sleep(0.2)
        await self.http.close()


async def play(players: list[dict], port: int, args, server_pgids: dict[str, int] | None = None):
    """Run the participants against 127.0.0.1:port. `server_pgids`: the process groups whose CPU time is
    measured over the run, by name ("gunicorn"; with --nodes "node1", ..., and "balancer")."""
    server_pgids = server_pgids or {}
    stats = Stats()
    rng = random.Random(args.seed)
    clients = [Participant(p, port, stats, random.Random(rng.random()), args) for p in players]
    # Warm-up, not measured: every participant opens their search page (the CSRF cookie), all at once.
    warm = time.monotonic()
    await asyncio.gather(*(c.home() for c in clients))
    for _ in range(3):  # a page that timed out on a busy machine: without its CSRF cookie every POST is a 403
        missing = [c for c in clients if "csrftoken" not in c.http.cookies]
        if not missing:
            break
        await asyncio.gather(*(c.home() for c in missing))
    print(f"warm-up: {len(clients)} search pages in {time.monotonic() - warm:.1f} s")
    stats.measuring = True
    cpu_before = {name: cpu_seconds(pgid) for name, pgid in server_pgids.items()}
    postgres_before, own_before = cpu_seconds(name="postgres"), own_cpu_seconds()
    started = time.monotonic()
    stop_at = started + args.duration

    async def report():
        last = time.monotonic()
        while time.monotonic() < stop_at:
            await asyncio.sleep(min(args.report_every, max(0.1, stop_at - time.monotonic())))
            now = time.monotonic()
            print(
                f"  t={now - started:5.1f}s  {stats.window_events / (now - last):7.0f} events/s  "
                f"{stats.window_requests / (now - last):6.0f} requests/s  "
                f"p99 {percentile(stats.window_latency, 99) * 1000:6.0f} ms  "
                f"errors {sum(stats.errors.values())}",
                flush=True,
            )
            stats.window_events = stats.window_requests = 0
            stats.window_latency = []
            last = now

    # Participants arrive over the first two seconds, as a class would.
    async def start(client, delay):
        await asyncio.sleep(delay)
        await client.run(stop_at)

    async def loop_lag():
        """How late this process's own event loop wakes up: a latency figure includes it, as a browser's would
        not (each participant has a machine of their own)."""
        while time.monotonic() < stop_at:
            before = time.monotonic()
            await asyncio.sleep(0.01)
            stats.loop_lag.append(time.monotonic() - before - 0.01)

    reporter = asyncio.create_task(report())
    lag = asyncio.create_task(loop_lag())
    await asyncio.gather(*(start(c, rng.uniform(0, 2)) for c in clients))
    await lag
    elapsed = time.monotonic() - started
    stats.measuring = False
    stats.cpu_by_process = {name: cpu_seconds(pgid) - cpu_before[name] for name, pgid in server_pgids.items()}
    gunicorns = [cpu for name, cpu in stats.cpu_by_process.items() if name != "balancer"]
    stats.server_cpu = sum(gunicorns) if gunicorns else float("nan")
    stats.postgres_cpu = cpu_seconds(name="postgres") - postgres_before  # the local server's, whoever uses it
    stats.own_cpu = own_cpu_seconds() - own_before
    await reporter
    await asyncio.gather(*(c.drain(args.drain) for c in clients))
    return stats, clients, elapsed
