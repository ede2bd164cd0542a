/* What the page keeps across pages and reloads: localStorage under this participant's prefix, with an
 * in-memory fallback when it is unavailable (private mode, quota). */
import { cfg } from "./config.js";

const PREFIX = "sessionlab:" + cfg.token + ":";
const memory = {};

export function load(name, fallback) {
  try {
    const raw = window.localStorage.getItem(PREFIX + name);
    if (raw !== null) { return JSON.parse(raw); }
  } catch (e) { /* private mode, quota: fall back to memory */ }
  return Object.prototype.hasOwnProperty.call(memory, name) ? memory[name] : fallback;
}

export function save(name, value) {
  memory[name] = value;
  try { window.localStorage.setItem(PREFIX + name, JSON.stringify(value)); } catch (e) { /* memory only */ }
}

// Every action (an event, a posted form) takes the next number of this participant's one sequence.
export function nextSequence() {
  const seq = load("seq", 0) + 1;
  save("seq", seq);
  return seq;
}

export function lastSequence() { return load("seq", 0); }

// The outbox as stored: the events not yet acknowledged, oldest first.
export function outboxEvents() { return load("outbox", []); }

export function saveOutboxEvents(events) { save("outbox", events); }

// A withdrawn participant's page: what this browser kept of them (the outbox, its sequence, a page's state)
// is deleted too, never sent (their data on the server are gone).
export function forgetAll() {
  Object.keys(memory).forEach(function (name) { delete memory[name]; });
  try {
    const names = [];
    for (let i = 0; i < window.localStorage.length; i++) {
      const key = window.localStorage.key(i);
      if (key && key.indexOf(PREFIX) === 0) { names.push(key); }
    }
    names.forEach(function (key) { window.localStorage.removeItem(key); });
  } catch (e) { /* nothing kept */ }
}
