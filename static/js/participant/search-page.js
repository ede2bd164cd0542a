/* The search page (#search-app): its controls wired to the query, the pager, the document panel, the
 * grades (buttons and number keys), the end dialog; then what it showed restored and the time limit set. */
import { ask, restoreTurns } from "./answers.js";
import { startAttention } from "./attention.js";
import { cfg } from "./config.js";
import { closeDocument, fitDocument, startReading } from "./document-view.js";
import { endDialogIsOpen, wireEndDialog } from "./ending.js";
import { startExposure } from "./exposure.js";
import { startFormulation } from "./formulation.js";
import { judge } from "./judgments.js";
import { beacon } from "./outbox.js";
import { runQuery, showPage } from "./queries.js";
import { restore } from "./restore.js";
import { markSend } from "./scan-marks.js";
import { app, byId, gradeLabels, state } from "./search-state.js";
import { startTimeLimit } from "./time-limit.js";

// The number keys grade the open document, Escape closes it (not while typing, nor with the dialog open).
function onKey(event) {
  if (!state.openDoc || endDialogIsOpen() || event.ctrlKey || event.metaKey || event.altKey) { return; }
  const target = event.target;
  if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) { return; }
  if (/^[0-9]$/.test(event.key) && gradeLabels[parseInt(event.key, 10)] !== undefined) {
    event.preventDefault();
    judge(parseInt(event.key, 10));
  } else if (event.key === "Escape") {
    closeDocument();
  }
}

export function startSearchPage() {
  if (!app) { return; }
  startExposure();
  startAttention();
  startFormulation(byId("query"));
  startReading();
  window.addEventListener("resize", fitDocument);
  window.addEventListener("pagehide", function (event) { markSend(); beacon(event); });
  byId("search-form").addEventListener("submit", function (event) {
    event.preventDefault();
    const text = byId("query").value.trim();
    if (text && !state.finished && cfg.answerUrl) {
      ask(text);  // a generative system: a turn of the conversation (answers.js)
      byId("query").value = "";
    } else if (text && !state.finished) { runQuery(text); }
  });
  byId("prev-page").addEventListener("click", function () { showPage(state.page - 1); });
  byId("next-page").addEventListener("click", function () { showPage(state.page + 1); });
  byId("close-document").addEventListener("click", closeDocument);
  Array.prototype.forEach.call(document.querySelectorAll(".grade-button"), function (button) {
    button.addEventListener("click", function () { judge(parseInt(button.dataset.grade, 10)); });
  });
  wireEndDialog();
  document.addEventListener("keydown", onKey);
  restore(cfg.restored || null);
  if (cfg.answerUrl) { restoreTurns(cfg.turns); }
  startTimeLimit();
}
