/* Ending the task: asked first in a dialog (one click must not end it, and it says so when nothing was
 * searched yet), then session_end is sent, the page is frozen, and it leaves once the outbox is empty. */
import { cfg } from "./config.js";
import { closeDocument } from "./document-view.js";
import { enqueue, whenEmpty } from "./outbox.js";
import { markSend } from "./scan-marks.js";
import { app, byId, QUERIES, state, waiting } from "./search-state.js";
import { load } from "./storage.js";

const QUESTIONS = { satisfied: "End this task: you found what you need?",
                    gave_up: "End this task without finding what you need?" };
const endDialog = byId("end-dialog");
let endReason = null;

// reason: satisfied, gave_up, timed_out; null when the session ended elsewhere (nothing more is sent).
export function finish(reason) {
  if (state.finished) { return; }
  closeDocument();
  if (reason) { markSend(); } else { state.mark = null; }  // ended elsewhere: a mark would be refused
  state.finished = true;
  if (reason) { enqueue("session_end", { reason: reason }); }
  Array.prototype.forEach.call(app.querySelectorAll("button, input"), function (el) { el.disabled = true; });
  waiting("Saving your search…");
  whenEmpty(function () { window.location.assign(cfg.homeUrl); });
}

export function endDialogIsOpen() { return endDialog.open; }

function askToEnd(reason) {
  if (state.finished) { return; }
  endReason = reason;
  byId("end-question").textContent = QUESTIONS[reason] || "End this task?";
  byId("end-no-queries").hidden = load(QUERIES, 0) > 0;
  if (endDialog.showModal) {
    if (!endDialog.open) { endDialog.showModal(); }
  } else {
    endDialog.setAttribute("open", "");
  }
  byId("end-cancel").focus();  // Enter keeps searching: ending takes a deliberate choice
}

function closeEndDialog() {
  if (endDialog.close) {
    if (endDialog.open) { endDialog.close(); }
  } else {
    endDialog.removeAttribute("open");
  }
}

export function wireEndDialog() {
  byId("end-cancel").addEventListener("click", function () { endReason = null; closeEndDialog(); });
  byId("end-confirm").addEventListener("click", function () {
    const reason = endReason;
    endReason = null;
    closeEndDialog();
    if (reason) { finish(reason); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-end]"), function (button) {
    button.addEventListener("click", function () { askToEnd(button.dataset.end); });
  });
}
