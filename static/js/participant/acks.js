/* The server's acknowledgements, applied to the outbox. Every ack is one of: ok (stored), refused (stored
 * with its refusal), error (the server cannot store it as sent), retry_later (not stored yet: its query has
 * not arrived, or a search cap). The first three are final: the event leaves the outbox (a refused or
 * unstorable one with a short notice, and so do the events that name it as their query). A retry_later
 * event stays, and is sent again after a growing wait, for up to GIVE_UP_MS. */
import { outboxEvents, saveOutboxEvents } from "./storage.js";
import { showNotice } from "./status.js";

const GIVE_UP_MS = 10 * 60 * 1000;
const handlers = {};  // event id -> function(ack), for events created on this page

// The page waits on this event's ack (a query's results, a document's text, a judgment's confirmation).
export function expectAck(id, handler) { handlers[id] = handler; }

function callHandler(id, ack) {
  const handler = handlers[id];
  delete handlers[id];
  if (handler) {
    try { handler(ack); } catch (e) { window.console && console.error(e); }
  }
}

export function settle(acks) {
  const done = {}, waiting = {}, now = Date.now();
  let lost = 0, reason = "";
  acks.forEach(function (ack) {
    if (!ack || !ack.id) { return; }
    if (ack.ok || ack.refused || ack.error) {
      done[ack.id] = ack;
    } else if (ack.retry_later) {
      waiting[ack.id] = ack;
    }
  });
  const queue = outboxEvents(), kept = [], gone = {};
  queue.forEach(function (event) {
    let ack = done[event.id];
    const dependsOn = event.data && event.data.query_event;
    if (!ack && dependsOn && gone[dependsOn]) {  // its query was refused: it can never be stored
      ack = done[event.id] = { id: event.id, ok: false, refused: gone[dependsOn] };
    }
    if (!ack && waiting[event.id]) {
      event.since = event.since || now;
      event.tries = (event.tries || 0) + 1;
      if (now - event.since > GIVE_UP_MS) {
        ack = done[event.id] = { id: event.id, ok: false, refused: waiting[event.id].retry_later };
      } else {
        event.notBefore = now + Math.min(1000 * Math.pow(2, event.tries - 1), 15000);
      }
    }
    if (!ack) { kept.push(event); return; }
    if (!ack.ok) {
      gone[event.id] = ack.refused || ack.error;
      if (!handlers[event.id]) { lost += 1; reason = ack.refused || ack.error; }
    }
  });
  saveOutboxEvents(kept);
  if (lost) { showNotice(lost, lost === 1 ? reason : ""); }
  Object.keys(done).forEach(function (id) { callHandler(id, done[id]); });
}
