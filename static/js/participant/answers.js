/* A generative system's page: a conversation instead of a list. Each question is a turn: it is
 * POSTed to the answer endpoint (the server answers it within the system's deadline and keeps the turn),
 * then logged as a query event naming the turn, whose shown results are the cited documents (ranked in the
 * order first cited). A citation opens its document in the same document view as a result (document_open
 * names the turn's query event and the document's rank); the grades are the same keys. A slow or failed
 * answer says so with a "Try again" that asks the same question again. The newest answer's list of cited
 * sources is watched as a page of results is (exposure.js: on screen, hovers), by the cited ranks. */
import { cfg } from "./config.js";
import { openDocument } from "./document-view.js";
import { watchResults } from "./exposure.js";
import { formulationTaken } from "./formulation.js";
import { enqueue } from "./outbox.js";
import { byId, gradeLabels, QUERIES, showMessage, state } from "./search-state.js";
import { load, save } from "./storage.js";

const WAIT_MS = 40000;  // past the longest answer deadline (30 s) and its retrieval: then "try again"

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

function newTurnId() {
  return "t" + Date.now().toString(36) + Math.random().toString(36).slice(2, 10);
}

// The answer's text with each citation marker a button opening its document.
function answerBody(answer, queryEvent) {
  const body = document.createElement("p");
  body.className = "answer-text";
  const marks = (answer.citations || []).filter(function (c) { return c.start !== null && c.end !== null; })
    .sort(function (a, b) { return a.start - b.start; });
  const titles = {};
  (answer.cited || []).forEach(function (c) { titles[c.doc] = c.title; });
  let at = 0;
  marks.forEach(function (c) {
    if (c.start < at) { return; }  // one marker citing two passages: drawn once, as its first
    body.appendChild(document.createTextNode(answer.text.slice(at, c.start)));
    body.appendChild(citeButton(c.doc, c.rank, titles[c.doc], queryEvent, "[" + c.rank + "]"));
    at = c.end;
  });
  body.appendChild(document.createTextNode(answer.text.slice(at)));
  return body;
}

function citeButton(doc, rank, title, queryEvent, label) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "link citation";
  button.dataset.doc = doc;
  button.dataset.rank = rank;
  button.textContent = label;
  button.title = title || ("Document " + doc);
  button.addEventListener("click", function () {
    state.queryEvent = queryEvent;  // the document is a shown result of this turn's query
    openDocument({ doc: doc, rank: rank, title: title });
  });
  return button;
}

function sources(answer, queryEvent) {
  const list = document.createElement("ol");
  list.className = "answer-sources";
  (answer.cited || []).forEach(function (c) {
    const item = document.createElement("li");
    item.className = "result answer-source";  // a shown result: exposure.js watches it by its rank
    item.dataset.rank = c.rank;
    item.dataset.doc = c.doc;
    item.appendChild(citeButton(c.doc, c.rank, c.title, queryEvent, c.title || ("Document " + c.doc)));
    const judged = document.createElement("span");  // the grade given, as beside a result (judgments.js)
    judged.className = "judged";
    if (state.grades[c.doc] !== undefined) { judged.textContent = " " + gradeLabels[state.grades[c.doc]]; }
    item.appendChild(judged);
    list.appendChild(item);
  });
  return list;
}

function followUps(answer) {
  const box = document.createElement("p");
  box.className = "follow-ups";
  (answer.follow_ups || []).forEach(function (text) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "secondary follow-up";
    button.textContent = text;
    button.addEventListener("click", function () { ask(text); });
    box.appendChild(button);
  });
  return box;
}

function turnItem(question) {
  const item = document.createElement("li");
  item.className = "turn";
  const asked = document.createElement("p");
  asked.className = "turn-question";
  asked.textContent = question;
  item.appendChild(asked);
  byId("conversation").appendChild(item);
  return item;
}

export function drawAnswer(item, answer, queryEvent, watch) {
  item.dataset.turn = answer.turn;
  item.dataset.queryEvent = queryEvent;
  item.appendChild(answerBody(answer, queryEvent));
  if ((answer.cited || []).length) {
    const list = sources(answer, queryEvent);
    item.appendChild(list);
    // What of the newest answer's sources was on screen: the exposure of its query's shown results.
    if (watch && queryEvent) { watchResults(queryEvent, 1, list.querySelectorAll(".answer-source")); }
  }
  if ((answer.follow_ups || []).length) { item.appendChild(followUps(answer)); }
  item.scrollIntoView({ block: "nearest" });
}

function tryAgain(item, question, message) {
  const box = document.createElement("div");
  box.className = "message try-again";
  box.setAttribute("role", "alert");
  const text = document.createElement("p");
  text.textContent = message || "The answer is not available right now. Please try again in a moment.";
  const button = document.createElement("button");
  button.type = "button";
  button.className = "try-again-button";
  button.textContent = "Try again";
  button.addEventListener("click", function () { item.remove(); ask(question); });
  box.appendChild(text);
  box.appendChild(button);
  item.appendChild(box);
  button.focus();
}

function logTurn(answer, question) {
  const data = { text: question, turn: answer.turn };
  const formulation = formulationTaken();
  if (formulation) { data.formulation = formulation; }
  return enqueue("query", data, function (ack) {
    if (!ack.ok) { showMessage(ack.refused || ack.error || "That could not be saved."); }
  });
}

export function ask(question) {
  if (state.finished || state.pendingEvent) { return; }
  showMessage("");
  save(QUERIES, load(QUERIES, 0) + 1);
  const item = turnItem(question);
  const waiting = document.createElement("p");
  waiting.className = "muted answer-waiting";
  waiting.textContent = "Writing an answer…";
  item.appendChild(waiting);
  const turn = newTurnId();
  state.pendingEvent = turn;
  const controller = new AbortController();
  const timer = window.setTimeout(function () { controller.abort(); }, WAIT_MS);
  fetch(cfg.answerUrl, {
    method: "POST", credentials: "same-origin", signal: controller.signal,
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify({ session: cfg.session, turn: turn, question: question }),
  }).then(function (response) {
    return response.json().catch(function () { return { ok: false }; });
  }).then(function (answer) {
    waiting.remove();
    if (answer.ok) {
      drawAnswer(item, answer, logTurn(answer, question), true);
    } else if (answer.refused) {
      item.remove();
      showMessage(answer.refused);
    } else {
      tryAgain(item, question, answer.try_again);
    }
  }).catch(function () {
    waiting.remove();
    tryAgain(item, question, null);
  }).finally(function () {
    window.clearTimeout(timer);
    state.pendingEvent = null;
  });
}

// After a reload: the turns the server logged come back (their query events are stored already).
export function restoreTurns(turns) {
  (turns || []).forEach(function (answer, n) {
    drawAnswer(turnItem(answer.question), answer, answer.query_event, n === turns.length - 1);
  });
  if ((turns || []).length && !load(QUERIES, 0)) { save(QUERIES, turns.length); }
}
