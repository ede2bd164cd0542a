/* The event outbox. Every action becomes an event {id, seq, type, session, time, data}. Events wait in an
 * outbox kept in localStorage (so closing the tab loses nothing), are POSTed in batches to the events
 * endpoint, and stay there until the server acknowledges them (acks.js); the server stores each id once, so
 * re-sending is always safe. When the tab is hidden the outbox is also sent with navigator.sendBeacon.
 * Leaving a step waits until the outbox is empty (whenEmpty).
 *
 * Events the page waits on (a query's results, another page, the end) are sent at once. The others (opening
 * and closing a document, a judgment, a scan mark) are shown at once from what the page has (results carry
 * their documents' text) and wait in the outbox for up to LATER_MS, leaving with the next request: the same
 * events in fewer requests (docs/performance-load.md).
 *
 * A batch that fails as a whole (5xx, or no answer) is split: the next try sends half of it, down to the
 * first event alone, so one event the server cannot digest never holds back the others: alone and failing,
 * it waits (a growing back-off) while the others go, and leaves with a notice once it has failed
 * SINGLE_TRIES times while the server stored other events. */
import { expectAck, settle } from "./acks.js";
import { clockIn, clockOut } from "./clock.js";
import { cfg } from "./config.js";
import { lastSequence, nextSequence, outboxEvents, saveOutboxEvents } from "./storage.js";
import { describeOutboxWith, showStatus } from "./status.js";

const BATCH = 50;
const LATER_MS = 3000;
const SINGLE_TRIES = 3;  // server errors for an event sent alone, while others are stored, before it leaves
let idleWaiters = [];    // callbacks waiting for an empty outbox
let inFlight = false;
let retryDelay = 1000;
let retryTimer = null;
let laterTimer = null;   // the flush of events that need no answer yet
let waitTimer = null;    // the next try of events answered retry_later
let batchSize = BATCH;   // halved after a failed batch, doubled back after each success
let lastSuccess = 0;     // when the server last answered a batch

function newId() {
  if (window.crypto && window.crypto.randomUUID) { return window.crypto.randomUUID(); }
  const bytes = new Uint8Array(16);
  window.crypto.getRandomValues(bytes);
  return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
}

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) { return decodeURIComponent(match[1]); }
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

function wire(event) {  // what the server gets: the event without the outbox's own bookkeeping
  return { id: event.id, seq: event.seq, type: event.type, session: event.session, time: event.time,
           data: event.data };
}

function due(event, now) { return !event.notBefore || event.notBefore <= now; }

// Events waiting for LATER_MS are not news: the status line counts the outbox only while it is being sent.
function describeOutbox() {
  return { pending: inFlight || retryTimer || waitTimer ? outboxEvents().length : 0,
           waitingForConnection: Boolean(retryTimer) };
}

/* Queue an event; onAck(ack) when the server answers for it; `later`: the page does not wait on it (it
 * leaves within LATER_MS); `at`: when it happened, if not now. Returns the event's id. */
export function enqueue(type, data, onAck, later, at) {
  const event = {
    id: newId(), seq: nextSequence(), type: type, session: cfg.session || null,
    time: at || new Date().toISOString(), data: data || {}
  };
  const queue = outboxEvents();
  queue.push(event);
  saveOutboxEvents(queue);
  if (onAck) { expectAck(event.id, onAck); }
  if (!later) {
    flush();
  } else if (!laterTimer) {
    laterTimer = window.setTimeout(function () { laterTimer = null; flush(); }, LATER_MS);
  }
  return event.id;
}

function scheduleRetry(delay) {
  if (retryTimer) { return; }
  retryTimer = window.setTimeout(function () { retryTimer = null; flush(); }, delay);
  showStatus();
}

function scheduleWait(queue, now) {
  let next = null;
  queue.forEach(function (event) {
    if (event.notBefore && (next === null || event.notBefore < next)) { next = event.notBefore; }
  });
  if (next === null || waitTimer) { return; }
  waitTimer = window.setTimeout(function () { waitTimer = null; flush(); }, Math.max(50, next - now));
}

function failed(batch, answered) {
  // answered: the server said the content failed (a 5xx, or 400/413 for the whole body); otherwise the
  // network failed or the answer says nothing about the events (403, 404, 429): then only the back-off.
  inFlight = false;
  const now = Date.now();
  if (batch.length > 1) {
    batchSize = Math.max(1, Math.floor(batch.length / 2));
    if (answered) { scheduleRetry(200); return; }  // the server is there: look for the event it chokes on
  } else if (answered) {
    const queue = outboxEvents();
    const event = queue.filter(function (e) { return e.id === batch[0].id; })[0];
    if (event) {
      event.failures = (event.failures || 0) + 1;
      event.failedSince = event.failedSince || now;
      // Alone, it failed again while the server stored others since its first failure: it is this event,
      // not an outage. It leaves, with a notice; in an outage nothing is stored and nothing is dropped.
      if (event.failures >= SINGLE_TRIES && lastSuccess > event.failedSince) {
        settle([{ id: event.id, ok: false, error: "the server could not store it" }]);
        flush();
        return;
      }
      event.notBefore = now + Math.min(1000 * Math.pow(2, event.failures - 1), 30000);
      saveOutboxEvents(queue);
      scheduleRetry(200);  // the others go on meanwhile
      return;
    }
  }
  scheduleRetry(retryDelay);
  retryDelay = Math.min(retryDelay * 2, 8000);
}

function answered(batch, clock, response) {
  const arrived = Date.now();
  if (!response.ok) {
    failed(batch, response.status >= 500 || response.status === 400 || response.status === 413);
    return;
  }
  return response.json().then(function (body) {
    clockIn(clock.sent, arrived, body.clock);
    inFlight = false;
    retryDelay = 1000;
    lastSuccess = Date.now();
    batchSize = Math.min(BATCH, batchSize * 2);
    if (retryTimer) { window.clearTimeout(retryTimer); retryTimer = null; }
    settle(body.acks || []);
    flush();
  });
}

export function flush() {
  showStatus();
  if (inFlight) { return; }
  const queue = outboxEvents(), now = Date.now();
  if (!queue.length) {
    const waiters = idleWaiters;
    idleWaiters = [];
    waiters.forEach(function (callback) { callback(); });
    return;
  }
  const batch = queue.filter(function (event) { return due(event, now); }).slice(0, batchSize);
  if (!batch.length) { scheduleWait(queue, now); return; }
  inFlight = true;
  if (laterTimer) { window.clearTimeout(laterTimer); laterTimer = null; }  // they are in this batch
  const clock = clockOut();
  fetch(cfg.eventsUrl, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify({ events: batch.map(wire), clock: clock })
  }).then(function (response) {
    return answered(batch, clock, response);
  }).catch(function () {
    if (inFlight) { failed(batch, false); }
  });
}

export function whenEmpty(callback) {
  if (!outboxEvents().length && !inFlight) { callback(); return; }
  idleWaiters.push(callback);
  flush();
}

// Reports that must leave with the page (exposure.js, attention.js): queued before the beacon reads the outbox.
const leavingReports = [];
export function onLeaving(report) { leavingReports.push(report); }

export function beacon(event) {  // event: the pagehide, when the page is being left
  leavingReports.forEach(function (report) { report(event); });
  const queue = outboxEvents();
  if (!queue.length || !navigator.sendBeacon) { return; }
  const form = new FormData();
  form.append("csrfmiddlewaretoken", csrfToken());
  form.append("batch", JSON.stringify({ events: queue.slice(0, batchSize).map(wire), clock: clockOut() }));
  // Fire and forget: the events stay in the outbox until a fetch gets them acknowledged (no duplicates).
  navigator.sendBeacon(cfg.eventsUrl, form);
}

// The page's lifecycle: hidden, the outbox goes by beacon; visible or back online, it is sent again.
export function startOutbox() {
  describeOutboxWith(describeOutbox);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { beacon(); } else { flush(); }
  });
  window.addEventListener("pagehide", beacon);
  window.addEventListener("online", function () {
    if (retryTimer) { window.clearTimeout(retryTimer); retryTimer = null; }
    retryDelay = 1000;
    flush();
  });
}

// For the end-to-end test, completion.js and debugging: how many events wait, the last sequence number.
export function exposeOutbox() {
  window.sessionlabOutbox = {
    pending: function () { return outboxEvents().length; },
    sequence: function () { return lastSequence(); }
  };
}
