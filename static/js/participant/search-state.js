/* The search page's shared state: what it shows (the query, the page of results, the open document, the
 * grades, the held scan mark) and the few lookups its modules share. */
import { cfg } from "./config.js";

export const app = document.getElementById("search-app");

export function byId(id) { return document.getElementById(id); }

export const state = { queryEvent: null, pendingEvent: null, page: 1, total: null, results: [], openDoc: null,
                       grades: {}, finished: false, queryText: "", pendingText: "", mark: null };

// Queries issued in this session, kept across reloads on this device: ending a task unsearched asks first.
export const QUERIES = "queries:" + (cfg.session || "");

export const gradeLabels = {};
(cfg.grades || []).forEach(function (g) { gradeLabels[g.value] = g.label; });

export function showMessage(text) {
  const element = byId("system-message");
  element.textContent = text || "";
  element.hidden = !text;
}

// The line above the results says what the page is waiting for ("Searching…").
export function waiting(text) {
  byId("results-info").textContent = text;
}
