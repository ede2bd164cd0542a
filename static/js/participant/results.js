/* A page of results, drawn from a query's (or results_page's) acknowledgement: the list with highlighted
 * snippets, the grades already given, the scan-mark links, the count and the pager. A refusal is shown
 * instead; one that says the session is finished ends the page. */
import { cfg } from "./config.js";
import { openDocument } from "./document-view.js";
import { finish } from "./ending.js";
import { watchResults } from "./exposure.js";
import { formulationStart } from "./formulation.js";
import { markSend, scanMark } from "./scan-marks.js";
import { byId, gradeLabels, showMessage, state } from "./search-state.js";
import { fillSnippet, termPattern, termSpans } from "./snippets.js";

function refusedAck(ack) {
  if (ack.ok) { return false; }
  showMessage(ack.refused || ack.error || "That could not be done.");
  if (/finished/.test(ack.refused || "")) { finish(null); }
  return true;
}

function resultItem(result, pattern) {
  const item = document.createElement("li");
  item.className = "result";
  item.dataset.rank = result.rank;
  item.dataset.doc = result.doc;
  const title = document.createElement("button");
  title.type = "button";
  title.className = "link result-title";
  title.textContent = result.title || ("Document " + result.doc);
  title.addEventListener("click", function () { openDocument(result); });
  const snippet = document.createElement("p");
  snippet.className = "snippet";
  const spans = Array.isArray(result.highlights) ? result.highlights
    : termSpans(result.snippet || "", pattern);
  fillSnippet(snippet, result.snippet, spans);
  const judged = document.createElement("span");
  judged.className = "judged";
  if (state.grades[result.doc] !== undefined) { judged.textContent = gradeLabels[state.grades[result.doc]]; }
  const mark = document.createElement("button");
  mark.type = "button";
  mark.className = "link scan-mark";
  mark.textContent = "I stopped scanning here";
  mark.setAttribute("aria-pressed", "false");
  mark.addEventListener("click", function () { scanMark(result.rank, item); });
  item.appendChild(title);
  item.appendChild(judged);
  item.appendChild(snippet);
  item.appendChild(mark);
  return item;
}

function showCount(ack) {
  const shown = state.results.length;
  byId("scan-help").hidden = !shown;
  if (!shown) {
    byId("results-info").textContent = ack.page > 1 ? "No more results." : "No documents matched.";
  } else {
    const first = state.results[0].rank;
    byId("results-info").textContent = "Results " + first + "–" + state.results[shown - 1].rank +
      (ack.total !== null && ack.total !== undefined ? " of " + ack.total : "");
  }
  const more = ack.total !== null && ack.total !== undefined ? ack.page * cfg.pageSize < ack.total
    : shown === cfg.pageSize;
  byId("pager").hidden = !(ack.page > 1 || more);
  byId("prev-page").disabled = ack.page <= 1;
  byId("next-page").disabled = !more;
  byId("page-number").textContent = "Page " + ack.page;
}

export function renderResults(ack) {
  if (refusedAck(ack)) { return; }
  markSend();  // the list the mark was on is replaced: the mark is final
  const pattern = termPattern(ack.query_used || state.queryText);
  state.page = ack.page;
  state.total = ack.total;
  state.results = ack.results || [];
  let message = ack.message || "";
  if (ack.query_used) { message = message || ("Showing results for: " + ack.query_used); }
  showMessage(message);
  const list = byId("results");
  list.innerHTML = "";
  list.start = (ack.page - 1) * cfg.pageSize + 1;
  state.results.forEach(function (result) { list.appendChild(resultItem(result, pattern)); });
  showCount(ack);
  if (state.queryEvent && state.results.length) { watchResults(state.queryEvent, ack.page); }
  formulationStart();  // the next query is written from this page
}
