/* The outbox's line on the page (#outbox-status): how many actions are still being saved, and for a few
 * seconds a notice when some could not be saved. The outbox tells what it holds through describeOutboxWith
 * (so this module does not import the outbox, which imports it). */
const statusElement = document.getElementById("outbox-status");
const NOTICE_MS = 8000;
let notice = "";
let noticeTimer = null;
let describe = function () { return { pending: 0, waitingForConnection: false }; };

export function describeOutboxWith(describer) { describe = describer; }

export function showStatus() {
  if (!statusElement) { return; }
  const outbox = describe();
  const pending = outbox.pending;
  const text = pending ? "Saving " + pending + " action" + (pending === 1 ? "" : "s") +
    (outbox.waitingForConnection ? " (waiting for the connection)…" : "…") : "";
  statusElement.textContent = notice ? notice + (text ? " " + text : "") : text;
}

export function showNotice(count, reason) {
  notice = (count === 1 ? "One action" : count + " actions") + " could not be saved" +
    (reason ? ": " + reason : ".");
  if (noticeTimer) { window.clearTimeout(noticeTimer); }
  noticeTimer = window.setTimeout(function () { notice = ""; noticeTimer = null; showStatus(); }, NOTICE_MS);
  showStatus();
}
