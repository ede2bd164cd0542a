/* The open document: its panel beside the results, opened from a result's title and closed by its button
 * or Escape; opening and closing are logged (document_open, document_close with the dwell time). */
import { cfg } from "./config.js";
import { enqueue } from "./outbox.js";
import { app, byId, gradeLabels, state } from "./search-state.js";

// The panel is sticky at the window's top, but before the page scrolls it starts below the header: its
// height leaves that room, so its foot (the grade buttons) is in the window at every scroll (a
// 1366x768 window included).
export function fitDocument() {
  const top = app.getBoundingClientRect().top + window.scrollY;
  app.style.setProperty("--document-top", Math.max(0, Math.round(top)) + "px");
  // On a phone the search box is pinned above the open document (participate.css): the sheet starts below.
  const bar = byId("search-form").getBoundingClientRect();
  if (app.classList.contains("document-open") &&
      window.getComputedStyle(byId("search-form")).position === "fixed") {
    app.style.setProperty("--search-bar", Math.ceil(bar.bottom) + "px");
  }
}

// The grade the participant chose is marked on its button (as on the assessor's form).
export function showChosen(grade) {
  Array.prototype.forEach.call(document.querySelectorAll(".grade-button"), function (button) {
    const chosen = grade !== undefined && parseInt(button.dataset.grade, 10) === grade;
    button.classList.toggle("chosen", chosen);
    button.setAttribute("aria-pressed", chosen ? "true" : "false");
  });
}

// How far down the open document was read: the deepest point of its text on screen, 0..1.
let deepest = 0;
function noteReading() {
  const scroller = [byId("document-view"), byId("document-text")].find(function (el) {
    return el && el.scrollHeight > el.clientHeight + 1;
  });
  const seen = scroller ? (scroller.scrollTop + scroller.clientHeight) / scroller.scrollHeight : 1;
  deepest = Math.max(deepest, Math.min(1, seen));
}

export function startReading() {
  const panel = byId("document-view");
  if (panel && cfg.exposure) { panel.addEventListener("scroll", noteReading, { capture: true, passive: true }); }
}

export function openDocument(result) {
  closeDocument();
  fitDocument();
  state.openDoc = { doc: result.doc, rank: result.rank, queryEvent: state.queryEvent, openedAt: Date.now() };
  byId("document-title").textContent = result.title || ("Document " + result.doc);
  const known = typeof result.text === "string";  // results carry their documents' text
  byId("document-text").textContent = known ? (result.text || "(This document has no text.)") : "Loading…";
  byId("judgment-status").textContent = state.grades[result.doc] !== undefined ?
    "Your judgment: " + gradeLabels[state.grades[result.doc]] : "";
  showChosen(state.grades[result.doc]);
  byId("document-view").hidden = false;
  app.classList.add("document-open");
  fitDocument();  // again: on a phone the search box is now pinned, and the sheet goes below it
  deepest = 0;
  noteReading();
  byId("document-view").dataset.doc = result.doc;
  const data = { doc: result.doc, rank: result.rank, query_event: state.queryEvent };
  enqueue("document_open", data, function (ack) {
    if (!state.openDoc || state.openDoc.doc !== result.doc) { return; }
    if (!ack.ok) {
      byId("document-text").textContent = ack.refused || "This document cannot be shown.";
      return;
    }
    if (!ack.document) { return; }
    byId("document-title").textContent = ack.document.title || ("Document " + ack.document.doc);
    byId("document-text").textContent = ack.document.text || "(This document has no text.)";
    deepest = 0;
    noteReading();
  }, known);
}

export function closeDocument() {
  const open = state.openDoc;
  if (!open) { return; }
  state.openDoc = null;
  const data = { doc: open.doc, rank: open.rank, query_event: open.queryEvent,
                 dwell_ms: Date.now() - open.openedAt };
  if (cfg.exposure) { noteReading(); data.read_permille = Math.round(deepest * 1000); }
  enqueue("document_close", data, null, true);
  byId("document-view").hidden = true;
  app.classList.remove("document-open");
  delete byId("document-view").dataset.doc;
}
