/* When the participant was away from the search page: the tab hidden, the window out of focus, or
 * no input (pointer, keys, scroll, touch) for cfg.idleMs. Each stretch becomes a span [kind, start_ms,
 * duration_ms], times from the session's start on the server's clock (cfg.sessionStarted; server-time.js); closed spans leave as one compact `attention` event when the tab is
 * hidden or left and every REPORT_MS. The server takes active time as the session's duration less their
 * union (studies/participation/events/exposure.py). Nothing runs when the study does not record attention. */
import { cfg } from "./config.js";
import { enqueue, onLeaving } from "./outbox.js";
import { serverNow } from "./server-time.js";

const REPORT_MS = 15000;
const INPUTS = ["pointermove", "pointerdown", "keydown", "wheel", "touchstart", "scroll"];

let sessionStart = 0;     // the session's start on the server's clock (ms since the epoch)
const open = {};          // kind -> when its span began (session ms)
let closed = [];          // spans ended and not yet reported
let lastInput = 0;
let idleTimer = null;

function sessionMs() { return Math.max(0, Math.round(serverNow() - sessionStart)); }

function begin(kind, at) {
  if (open[kind] === undefined) { open[kind] = at === undefined ? sessionMs() : at; }
}

function end(kind) {
  if (open[kind] === undefined) { return; }
  const start = open[kind];
  delete open[kind];
  const duration = sessionMs() - start;
  if (duration > 0) { closed.push([kind, start, duration]); }
}

export function attentionReport() {
  if (!closed.length) { return; }
  const spans = closed.slice(0, 500);
  closed = closed.slice(500);
  enqueue("attention", { spans: spans }, null, true);
}

function armIdle() {
  if (idleTimer) { window.clearTimeout(idleTimer); }
  idleTimer = window.setTimeout(function () {
    idleTimer = null;
    begin("idle", sessionMs() - cfg.idleMs);  // idle since the last input
  }, cfg.idleMs);
}

function onInput() {
  const at = Date.now();
  if (at - lastInput < 200 && open.idle === undefined) { return; }  // pointermove fires often: re-arm 5x/s
  lastInput = at;
  end("idle");
  armIdle();
}

function onVisibility() {
  if (document.hidden) {
    begin("hidden");
    end("idle");
  } else {
    end("hidden");
    armIdle();
  }
}

export function startAttention() {
  if (!cfg.attention || !cfg.sessionStarted) { return; }
  sessionStart = Date.parse(cfg.sessionStarted);
  if (!isFinite(sessionStart)) { return; }
  if (document.hidden) { begin("hidden"); }
  if (!document.hasFocus()) { begin("blur"); }
  window.addEventListener("blur", function () { begin("blur"); });
  window.addEventListener("focus", function () { end("blur"); });
  document.addEventListener("visibilitychange", onVisibility);
  // With the beacon, when the tab is hidden or left; leaving ends every open span first.
  onLeaving(function (event) {
    if (event && event.type === "pagehide") { ["hidden", "blur", "idle"].forEach(end); }
    attentionReport();
  });
  INPUTS.forEach(function (name) { window.addEventListener(name, onInput, { passive: true }); });
  armIdle();
  window.setInterval(attentionReport, REPORT_MS);
}
