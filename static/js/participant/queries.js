/* A query, or another page of its results: the open document closes, a held scan mark is sent, and the
 * answer (the event's acknowledgement) is drawn unless a newer query or page replaced it meanwhile. */
import { closeDocument } from "./document-view.js";
import { formulationTaken } from "./formulation.js";
import { enqueue } from "./outbox.js";
import { renderResults } from "./results.js";
import { markSend } from "./scan-marks.js";
import { QUERIES, state, waiting } from "./search-state.js";
import { load, save } from "./storage.js";

export function runQuery(text) {
  closeDocument();
  markSend();
  save(QUERIES, load(QUERIES, 0) + 1);
  const data = { text: text };
  const formulation = formulationTaken();
  if (formulation) { data.formulation = formulation; }
  const id = enqueue("query", data, function (ack) {
    if (state.pendingEvent !== id) { return; }  // a newer query or page replaced this one
    state.pendingEvent = null;
    if (ack.ok) { state.queryEvent = id; state.queryText = text; }
    renderResults(ack);
  });
  state.pendingEvent = id;
  waiting("Searching…");
}

export function showPage(page) {
  if (!state.queryEvent || page < 1) { return; }
  closeDocument();
  markSend();
  const id = enqueue("results_page", { query_event: state.queryEvent, page: page }, function (ack) {
    if (state.pendingEvent !== id) { return; }
    state.pendingEvent = null;
    renderResults(ack);
    window.scrollTo(0, 0);
  });
  state.pendingEvent = id;
  waiting("Loading page " + page + "…");
}
