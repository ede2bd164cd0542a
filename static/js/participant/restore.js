/* The page opened again (a reload, another device): what it showed comes back. The server sends the last
 * list shown (the last query's last page, as its acknowledgement carried it) and the grades it holds;
 * nothing is logged for it here (the server logged the reload). Judgments and a query still in this
 * device's outbox are newer than what the server holds: their grades are shown, and the query's answer,
 * when it comes, replaces the restored list. */
import { expectAck } from "./acks.js";
import { cfg } from "./config.js";
import { renderResults } from "./results.js";
import { byId, gradeLabels, QUERIES, state, waiting } from "./search-state.js";
import { load, outboxEvents, save } from "./storage.js";

// The query or results page still waiting in the outbox, its answer drawn when it comes.
function awaitPending(pendingQuery) {
  const id = pendingQuery.id, text = pendingQuery.data && pendingQuery.data.text;
  state.pendingEvent = id;
  expectAck(id, function (ack) {
    if (state.pendingEvent !== id) { return; }
    state.pendingEvent = null;
    if (ack.ok && pendingQuery.type === "query") { state.queryEvent = id; state.queryText = text; }
    renderResults(ack);
  });
  if (pendingQuery.type === "query" && text) { byId("query").value = text; }
  waiting(pendingQuery.type === "query" ? "Searching…" : "Loading…");
}

export function restore(restored) {
  let pendingQuery = null;
  outboxEvents().forEach(function (event) {
    if (event.session !== cfg.session) { return; }
    if (event.type === "judgment" && event.data && gradeLabels[event.data.grade] !== undefined) {
      state.grades[event.data.doc] = event.data.grade;
    } else if (event.type === "query" || event.type === "results_page") {
      pendingQuery = event;
    }
  });
  if (restored) {
    Object.keys(restored.grades || {}).forEach(function (doc) {
      if (state.grades[doc] === undefined) { state.grades[doc] = restored.grades[doc]; }
    });
    state.queryEvent = restored.query_event;
    state.queryText = restored.query_text;
    if (!load(QUERIES, 0)) { save(QUERIES, 1); }
    renderResults({ ok: true, query: restored.query, page: restored.page, total: restored.total,
                    message: restored.message, query_used: restored.query_used, results: restored.results });
  }
  if (pendingQuery) { awaitPending(pendingQuery); }
}
