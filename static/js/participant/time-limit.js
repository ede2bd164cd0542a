/* The time limit: the page's own clock, set to the server's, counts down and ends the session as
 * timed_out (the server does too, a little later). */
import { cfg } from "./config.js";
import { finish } from "./ending.js";
import { byId } from "./search-state.js";
import { serverNow } from "./server-time.js";

export function startTimeLimit() {
  if (!cfg.deadline) { return; }
  const deadline = Date.parse(cfg.deadline);
  const timer = byId("timer");
  timer.hidden = false;
  let interval = null;
  const tick = function () {
    const left = Math.max(0, Math.round((deadline - serverNow()) / 1000));
    timer.textContent = "Time left: " + Math.floor(left / 60) + ":" + ("0" + (left % 60)).slice(-2);
    if (left <= 0) {
      window.clearInterval(interval);
      finish("timed_out");
    }
  };
  interval = window.setInterval(tick, 1000);
  tick();
}
