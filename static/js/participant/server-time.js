/* The server's clock on this page. cfg.serverNow was stamped while the server wrote the page: between the
 * request's leaving and the response's first byte (Navigation Timing), not when the scripts ran, which is
 * later by the page's load time. Times run on performance.now(), from the page's navigation start. */
import { cfg } from "./config.js";

function stampedAt() {
  const nav = window.performance.getEntriesByType ? window.performance.getEntriesByType("navigation")[0] : null;
  if (nav && nav.responseStart > 0) { return (nav.requestStart + nav.responseStart) / 2; }
  const t = window.performance.timing;
  if (t && t.responseStart > 0 && t.navigationStart > 0) {
    return (t.requestStart + t.responseStart) / 2 - t.navigationStart;
  }
  return window.performance.now();
}

const stamp = cfg.serverNow ? Date.parse(cfg.serverNow) : NaN;
const anchor = stampedAt();

/* Now on the server's clock (ms since the epoch); the page's own clock when no stamp was given. */
export function serverNow() {
  if (!isFinite(stamp)) { return Date.now(); }
  return stamp + (window.performance.now() - anchor);
}
