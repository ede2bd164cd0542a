/* The clock (docs/time-model.md). Each batch says when it left ("sent") and reports the last round trip the
 * page saw ("previous": when that batch left, when the server received and answered it, when the answer
 * arrived), so the server can estimate this clock's offset NTP-style and put every action on one timeline.
 * Kept across pages. */
import { load, save } from "./storage.js";

export function clockOut() {
  const clock = { sent: new Date().toISOString() };
  const previous = load("roundTrip", null);
  if (previous) { clock.previous = previous; }
  return clock;
}

export function clockIn(sent, arrived, answer) {
  if (!answer || !answer.server_received || !answer.server_sent) { return; }
  save("roundTrip", { sent: sent, server_received: answer.server_received, server_sent: answer.server_sent,
                      received: new Date(arrived).toISOString() });
}
