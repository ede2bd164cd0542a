/* "I stopped scanning here": the mark is held on the page while its result list is shown, so that a
 * mis-click can be undone (click it again) or moved; it is sent, with the time of its click, when the list
 * changes (a search, another page), the task ends or the page is left. The server keeps a query's deepest
 * mark. */
import { enqueue } from "./outbox.js";
import { state } from "./search-state.js";
import { showNotice } from "./status.js";

function showMark(item) {
  Array.prototype.forEach.call(document.querySelectorAll(".result.marked"), function (el) {
    el.classList.remove("marked");
    const link = el.querySelector(".scan-mark");
    link.textContent = "I stopped scanning here";
    link.setAttribute("aria-pressed", "false");
  });
  if (!item) { return; }
  item.classList.add("marked");
  const mark = item.querySelector(".scan-mark");
  mark.textContent = "You stopped scanning here (click to undo)";
  mark.setAttribute("aria-pressed", "true");
}

export function scanMark(rank, item) {
  if (!state.queryEvent || state.finished) { return; }
  if (state.mark && state.mark.queryEvent === state.queryEvent && state.mark.rank === rank) {
    state.mark = null;  // undone: nothing is sent
    showMark(null);
    return;
  }
  state.mark = { queryEvent: state.queryEvent, rank: rank, at: new Date().toISOString() };
  showMark(item);
}

export function markSend() {
  const mark = state.mark;
  if (!mark) { return; }
  state.mark = null;
  enqueue("scan_mark", { query_event: mark.queryEvent, rank: mark.rank }, function (ack) {
    if (!ack.ok) { showNotice(1, ack.refused || ack.error); }
  }, true, mark.at);
}
