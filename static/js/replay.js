/* The replay page: a session played back from its structured log (studies/replay/session_replay.py
 * writes it into #replay-data). At any moment t (ms from the session's start) the screen shows what the
 * participant had in front of them: the query, the page of results with each result shaded by how long it
 * was on screen over the session, the open document, the grades given so far, the scan mark; the status line
 * says when they were away (tab hidden, window not focused, idle). Play, pause, speed, and a jump to any
 * moment (the slider, or a line of the timeline). Everything is written as text, never as markup. */
const data = JSON.parse(document.getElementById("replay-data").textContent);
const timeline = data.timeline;
const duration = data.session.duration_ms !== null ? data.session.duration_ms
  : (timeline.length ? timeline[timeline.length - 1].t : 0);
const AWAY = { hidden: "Away: the tab was hidden", blur: "Away: the window was not focused", idle: "Idle: no input" };

let now = 0;
let playing = false;
let lastFrame = null;

function byId(id) { return document.getElementById(id); }

function clock(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
}

// A length of time as a person reads it: "9.9 s" under a minute, "1:12" (m:ss) from one.
function span(ms) {
  return ms < 60000 ? (ms / 1000).toFixed(1) + " s" : clock(ms);
}

function describe(entry) {
  switch (entry.kind) {
    case "start": return "The session begins";
    case "end": return "The session ends (" + (entry.reason || "?") + ")";
    case "query": return "Query " + entry.query + ": “" + entry.text + "”" + (entry.formulation_ms !== null &&
      entry.formulation_ms !== undefined ? " (written in " + span(entry.formulation_ms) + ")" : "");
    case "page": return "Page " + entry.page + " of query " + entry.query;
    case "open": return "Opens " + entry.doc + (entry.rank ? " (rank " + entry.rank + ")" : "");
    case "close": return "Closes " + entry.doc + (entry.dwell_ms ? " after " + span(entry.dwell_ms) : "");
    case "judgment": return "Judges " + entry.doc + ": " + entry.grade;
    case "mark": return "Stopped scanning at rank " + entry.rank + " (query " + entry.query + ")";
    case "exposure": return "Screen report: " + entry.ranks + (entry.ranks === 1 ? " result" : " results") + " on screen (query " + entry.query + ", page " + entry.page + ")";
    case "away": return (AWAY[entry.what] || "Away") + " for " + span(entry.duration_ms);
    default: return entry.kind;
  }
}

/* What was on the participant's screen at `t`. */
function stateAt(t) {
  const state = { query: null, page: 1, open: null, grades: {}, marks: {}, away: null };
  timeline.forEach(function (entry) {
    if (entry.t === null || entry.t > t) { return; }
    if (entry.kind === "query") { state.query = entry.query; state.page = 1; state.open = null; }
    if (entry.kind === "page" && entry.query === state.query) { state.page = entry.page; state.open = null; }
    if (entry.kind === "open") { state.open = entry.doc; }
    if (entry.kind === "close" && state.open === entry.doc) { state.open = null; }
    if (entry.kind === "judgment") { state.grades[entry.doc] = entry.grade; }
    if (entry.kind === "mark") { state.marks[entry.query] = entry.rank; }
    if (entry.kind === "away" && t < entry.t + entry.duration_ms) { state.away = entry.what; }
  });
  return state;
}

function shade(exposure) {
  if (!exposure || !exposure.visible_ms) { return ""; }
  const seconds = exposure.visible_ms / 1000;
  return "seen-" + (seconds < 1 ? 1 : seconds < 3 ? 2 : seconds < 8 ? 3 : 4);
}

function drawResults(state) {
  const list = byId("replay-results");
  list.textContent = "";
  const query = data.queries.find(function (q) { return q.position === state.query; });
  byId("replay-query").textContent = query ? "“" + query.text + "”" +
    (query.answer ? " — answered: " + query.answer.text + " (" + query.answer.model + ", " +
      query.answer.latency_ms + " ms)" : "") : "—";
  const page = query ? query.pages[state.page] : null;
  byId("replay-page").textContent = page ? "page " + state.page +
    (page.scroll_permille !== null && page.scroll_permille !== undefined ? ", scrolled to " + (page.scroll_permille / 10).toFixed(0) + " % of the list" : "") : "";
  if (!page) { return; }
  list.start = page.results.length ? page.results[0].rank : 1;
  page.results.forEach(function (result) {
    const item = document.createElement("li");
    item.dataset.rank = result.rank;
    item.className = shade(result.exposure);
    if (state.open === result.doc) { item.classList.add("open"); }
    if (state.marks[state.query] === result.rank) { item.classList.add("marked"); }
    const exposure = result.exposure;
    let text = result.title + " (" + result.doc + ")";
    if (exposure) { text += " — on screen " + span(exposure.visible_ms); }
    if (exposure && exposure.first_visible_ms !== null && exposure.last_visible_ms) {
      text += " (from " + (exposure.first_visible_ms / 1000).toFixed(1) + " to " +
              (exposure.last_visible_ms / 1000).toFixed(1) + " s after the page)";
    }
    if (exposure && exposure.hovers) { text += " [hovered]"; }
    if (exposure && exposure.read_permille !== null && exposure.read_permille !== undefined) {
      text += " — read to " + Math.round(exposure.read_permille / 10) + " %";
    }
    if (state.open === result.doc) { text += " [open]"; }
    if (state.grades[result.doc] !== undefined) { text += " — graded " + state.grades[result.doc]; }
    if (state.marks[state.query] === result.rank) { text += " [stopped here]"; }
    item.textContent = text;
    list.appendChild(item);
  });
}

function draw() {
  const state = stateAt(now);
  drawResults(state);
  const status = byId("replay-status");
  status.classList.toggle("away", Boolean(state.away));
  status.textContent = state.away ? AWAY[state.away] : state.open ? "Reading " + state.open
    : state.query ? "Looking at the results" : "Reading the task";
  byId("replay-clock").textContent = clock(now) + " / " + clock(duration);
  byId("replay-seek").value = String(now);
  Array.prototype.forEach.call(byId("replay-timeline").children, function (item, index) {
    const entry = timeline[index];
    const next = timeline[index + 1];
    item.classList.toggle("past", entry.t !== null && entry.t <= now);
    item.classList.toggle("now", entry.t !== null && entry.t <= now && (!next || next.t > now));
  });
}

function seek(t) {
  now = Math.min(Math.max(0, t), duration);
  draw();
}

function frame(at) {
  if (!playing) { return; }
  if (lastFrame !== null) { now += (at - lastFrame) * parseFloat(byId("replay-speed").value); }
  lastFrame = at;
  if (now >= duration) { now = duration; setPlaying(false); }
  draw();
  if (playing) { window.requestAnimationFrame(frame); }
}

function setPlaying(on) {
  playing = on;
  lastFrame = null;
  byId("replay-play").textContent = on ? "Pause" : "Play";
  if (on) {
    if (now >= duration) { now = 0; }
    window.requestAnimationFrame(frame);
  }
}

function buildTimeline() {
  const list = byId("replay-timeline");
  timeline.forEach(function (entry) {
    const item = document.createElement("li");
    item.dataset.kind = entry.kind;
    const jump = document.createElement("button");
    jump.type = "button";
    jump.className = "link";
    jump.textContent = (entry.t === null ? "?" : clock(entry.t)) + " " + describe(entry);
    jump.addEventListener("click", function () { setPlaying(false); seek(entry.t || 0); });
    item.appendChild(jump);
    list.appendChild(item);
  });
}

buildTimeline();
byId("replay-seek").max = String(duration);  // a session still running ends, here, at its last action
byId("replay-play").addEventListener("click", function () { setPlaying(!playing); });
byId("replay-seek").addEventListener("input", function (event) {
  setPlaying(false);
  seek(parseInt(event.target.value, 10));
});
seek(0);
document.body.dataset.replay = "ready";
