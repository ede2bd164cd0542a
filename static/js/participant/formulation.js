/* How long a query took to write: from the task or the last results page shown to the first
 * keystroke in the search box, and to the submission, in ms. Only those two moments are kept: nothing of
 * what is typed beyond the query the participant submits. Part of the attention family (cfg.attention). */
import { cfg } from "./config.js";

let shownAt = window.performance.now();
let firstKeyAt = null;

/* The task or a new page of results is on screen: the next query's clock starts here. */
export function formulationStart() {
  shownAt = window.performance.now();
  firstKeyAt = null;
}

/* The timing of the query being submitted (null when the study does not record attention); the clock
 * starts again for the next one. */
export function formulationTaken() {
  if (!cfg.attention) { return null; }
  const now = window.performance.now();
  const taken = { first_key_ms: firstKeyAt === null ? null : Math.round(firstKeyAt - shownAt),
                  submit_ms: Math.round(now - shownAt) };
  formulationStart();
  return taken;
}

export function startFormulation(box) {
  if (!cfg.attention || !box) { return; }
  box.addEventListener("input", function () {
    if (firstKeyAt === null) { firstKeyAt = window.performance.now(); }
  });
}
