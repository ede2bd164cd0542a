/* SessionLab participant pages: the event outbox and the search page. Plain JS, no build step.
 *
 * Every action becomes an event {id, seq, type, session, time, data}. Events wait in an outbox kept in
 * localStorage (so closing the tab loses nothing), are POSTed in batches to the events endpoint, and stay
 * there until the server acknowledges them; the server stores each id once, so re-sending is always safe.
 * When the tab is hidden the outbox is also sent with navigator.sendBeacon. Leaving a step waits until the
 * outbox is empty.
 *
 * Events the page waits on (a query's results, another page, the end) are sent at once. The others (opening
 * and closing a document, a judgment, a scan mark) are shown at once from what the page has (results carry
 * their documents' text) and wait in the outbox for up to LATER_MS, leaving with the next request: the same
 * events in fewer requests (docs/performance-load.md).
 */
(function () {
  "use strict";

  var configElement = document.getElementById("sessionlab-client");
  if (!configElement) { return; }
  var cfg = JSON.parse(configElement.textContent);
  var PREFIX = "sessionlab:" + cfg.token + ":";
  var BATCH = 50;
  var LATER_MS = 3000;
  var memory = {};

  // --- storage (localStorage, with an in-memory fallback when it is unavailable) -------------------------
  function load(name, fallback) {
    try {
      var raw = window.localStorage.getItem(PREFIX + name);
      if (raw !== null) { return JSON.parse(raw); }
    } catch (e) { /* private mode, quota: fall back to memory */ }
    return Object.prototype.hasOwnProperty.call(memory, name) ? memory[name] : fallback;
  }
  function save(name, value) {
    memory[name] = value;
    try { window.localStorage.setItem(PREFIX + name, JSON.stringify(value)); } catch (e) { /* memory only */ }
  }

  function nextSequence() {
    var seq = load("seq", 0) + 1;
    save("seq", seq);
    return seq;
  }

  function newId() {
    if (window.crypto && window.crypto.randomUUID) { return window.crypto.randomUUID(); }
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function csrfToken() {
    var match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (match) { return decodeURIComponent(match[1]); }
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // --- the outbox ----------------------------------------------------------------------------------------
  // Every ack is one of: ok (stored), refused (stored with its refusal), error (the server cannot store it as
  // sent), retry_later (not stored yet: its query has not arrived, or a search cap). The first three are final:
  // the event leaves the outbox (a refused or unstorable one with a short notice, and so do the events that name
  // it as their query). A retry_later event stays, and is sent again after a growing wait, for up to
  // GIVE_UP_MS. A batch that fails as a whole (5xx, or no answer) is split: the next try sends half of it,
  // down to the first event alone, so one event the server cannot digest never holds back the others: alone
  // and failing, it waits (a growing back-off) while the others go, and leaves with a notice once it has failed
  // SINGLE_TRIES times while the server stored other events.
  var handlers = {};      // event id -> function(ack), for events created on this page
  var idleWaiters = [];   // callbacks waiting for an empty outbox
  var inFlight = false;
  var retryDelay = 1000;
  var retryTimer = null;
  var laterTimer = null;  // the flush of events that need no answer yet
  var waitTimer = null;   // the next try of events answered retry_later
  var batchSize = BATCH;  // halved after a failed batch, doubled back after each success
  var lastSuccess = 0;    // when the server last answered a batch
  var SINGLE_TRIES = 3;   // server errors for an event sent alone, while others are stored, before it leaves
  var GIVE_UP_MS = 10 * 60 * 1000;
  var noticeTimer = null;
  var statusElement = document.getElementById("outbox-status");
  var notice = "";

  function outbox() { return load("outbox", []); }

  function showStatus() {
    if (!statusElement) { return; }
    var pending = inFlight || retryTimer || waitTimer ? outbox().length : 0;  // events waiting for LATER_MS are not news
    var text = pending ? "Saving " + pending + " action" + (pending === 1 ? "" : "s") +
      (retryTimer ? " (waiting for the connection)…" : "…") : "";
    statusElement.textContent = notice ? notice + (text ? " " + text : "") : text;
  }

  function showNotice(count, reason) {
    notice = (count === 1 ? "One action" : count + " actions") + " could not be saved" +
      (reason ? ": " + reason : ".");
    if (noticeTimer) { window.clearTimeout(noticeTimer); }
    noticeTimer = window.setTimeout(function () { notice = ""; noticeTimer = null; showStatus(); }, 8000);
    showStatus();
  }

  function wire(event) {  // what the server gets: the event without the outbox's own bookkeeping
    return { id: event.id, seq: event.seq, type: event.type, session: event.session, time: event.time,
             data: event.data };
  }

  function due(event, now) { return !event.notBefore || event.notBefore <= now; }

  // --- the clock (docs/time-model.md) ----------------------------------------------------------------------
  // Each batch says when it left ("sent") and reports the last round trip the page saw ("previous": when that
  // batch left, when the server received and answered it, when the answer arrived), so the server can
  // estimate this clock's offset NTP-style and put every action on one timeline. Kept across pages.
  function clockOut() {
    var clock = { sent: new Date().toISOString() };
    var previous = load("roundTrip", null);
    if (previous) { clock.previous = previous; }
    return clock;
  }

  function clockIn(sent, arrived, answer) {
    if (!answer || !answer.server_received || !answer.server_sent) { return; }
    save("roundTrip", { sent: sent, server_received: answer.server_received, server_sent: answer.server_sent,
                        received: new Date(arrived).toISOString() });
  }

  function enqueue(type, data, onAck, later, at) {
    var event = {
      id: newId(), seq: nextSequence(), type: type, session: cfg.session || null,
      time: at || new Date().toISOString(), data: data || {}
    };
    var queue = outbox();
    queue.push(event);
    save("outbox", queue);
    if (onAck) { handlers[event.id] = onAck; }
    if (!later) {
      flush();
    } else if (!laterTimer) {
      laterTimer = window.setTimeout(function () { laterTimer = null; flush(); }, LATER_MS);
    }
    return event.id;
  }

  function callHandler(id, ack) {
    var handler = handlers[id];
    delete handlers[id];
    if (handler) {
      try { handler(ack); } catch (e) { window.console && console.error(e); }
    }
  }

  function settle(acks) {
    var done = {}, waiting = {}, now = Date.now(), lost = 0, reason = "";
    acks.forEach(function (ack) {
      if (!ack || !ack.id) { return; }
      if (ack.ok || ack.refused || ack.error) { done[ack.id] = ack; } else if (ack.retry_later) { waiting[ack.id] = ack; }
    });
    var queue = outbox(), kept = [], gone = {};
    queue.forEach(function (event) {
      var ack = done[event.id];
      var dependsOn = event.data && event.data.query_event;
      if (!ack && dependsOn && gone[dependsOn]) {  // its query was refused: it can never be stored
        ack = done[event.id] = { id: event.id, ok: false, refused: gone[dependsOn] };
      }
      if (!ack && waiting[event.id]) {
        event.since = event.since || now;
        event.tries = (event.tries || 0) + 1;
        if (now - event.since > GIVE_UP_MS) {
          ack = done[event.id] = { id: event.id, ok: false, refused: waiting[event.id].retry_later };
        } else {
          event.notBefore = now + Math.min(1000 * Math.pow(2, event.tries - 1), 15000);
        }
      }
      if (!ack) { kept.push(event); return; }
      if (!ack.ok) {
        gone[event.id] = ack.refused || ack.error;
        if (!handlers[event.id]) { lost += 1; reason = ack.refused || ack.error; }
      }
    });
    save("outbox", kept);
    if (lost) { showNotice(lost, lost === 1 ? reason : ""); }
    Object.keys(done).forEach(function (id) { callHandler(id, done[id]); });
  }

  function scheduleRetry(delay) {
    if (retryTimer) { return; }
    retryTimer = window.setTimeout(function () { retryTimer = null; flush(); }, delay);
    showStatus();
  }

  function scheduleWait(queue, now) {
    var next = null;
    queue.forEach(function (event) { if (event.notBefore && (next === null || event.notBefore < next)) { next = event.notBefore; } });
    if (next === null || waitTimer) { return; }
    waitTimer = window.setTimeout(function () { waitTimer = null; flush(); }, Math.max(50, next - now));
  }

  function failed(batch, answered) {
    // answered: the server said the content failed (a 5xx, or 400/413 for the whole body); otherwise the network
    // failed or the answer says nothing about the events (403, 404, 429): then only the back-off.
    inFlight = false;
    var now = Date.now();
    if (batch.length > 1) {
      batchSize = Math.max(1, Math.floor(batch.length / 2));
      if (answered) { scheduleRetry(200); return; }  // the server is there: look for the event it chokes on
    } else if (answered) {
      var queue = outbox();
      var event = queue.filter(function (e) { return e.id === batch[0].id; })[0];
      if (event) {
        event.failures = (event.failures || 0) + 1;
        event.failedSince = event.failedSince || now;
        // Alone, it failed again while the server stored others since its first failure: it is this event, not
        // an outage. It leaves, with a notice; in an outage nothing is stored and nothing is dropped.
        if (event.failures >= SINGLE_TRIES && lastSuccess > event.failedSince) {
          settle([{ id: event.id, ok: false, error: "the server could not store it" }]);
          flush();
          return;
        }
        event.notBefore = now + Math.min(1000 * Math.pow(2, event.failures - 1), 30000);
        save("outbox", queue);
        scheduleRetry(200);  // the others go on meanwhile
        return;
      }
    }
    scheduleRetry(retryDelay);
    retryDelay = Math.min(retryDelay * 2, 8000);
  }

  function flush() {
    showStatus();
    if (inFlight) { return; }
    var queue = outbox(), now = Date.now();
    if (!queue.length) {
      var waiters = idleWaiters;
      idleWaiters = [];
      waiters.forEach(function (callback) { callback(); });
      return;
    }
    var batch = queue.filter(function (event) { return due(event, now); }).slice(0, batchSize);
    if (!batch.length) { scheduleWait(queue, now); return; }
    inFlight = true;
    if (laterTimer) { window.clearTimeout(laterTimer); laterTimer = null; }  // they are in this batch
    var clock = clockOut();
    fetch(cfg.eventsUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ events: batch.map(wire), clock: clock })
    }).then(function (response) {
      var arrived = Date.now();
      if (!response.ok) {
        failed(batch, response.status >= 500 || response.status === 400 || response.status === 413);
        return;
      }
      return response.json().then(function (body) {
        clockIn(clock.sent, arrived, body.clock);
        inFlight = false;
        retryDelay = 1000;
        lastSuccess = Date.now();
        batchSize = Math.min(BATCH, batchSize * 2);
        if (retryTimer) { window.clearTimeout(retryTimer); retryTimer = null; }
        settle(body.acks || []);
        flush();
      });
    }).catch(function () {
      if (inFlight) { failed(batch, false); }
    });
  }

  function whenEmpty(callback) {
    if (!outbox().length && !inFlight) { callback(); return; }
    idleWaiters.push(callback);
    flush();
  }

  function beacon() {
    var queue = outbox();
    if (!queue.length || !navigator.sendBeacon) { return; }
    var form = new FormData();
    form.append("csrfmiddlewaretoken", csrfToken());
    form.append("batch", JSON.stringify({ events: queue.slice(0, batchSize).map(wire), clock: clockOut() }));
    // Fire and forget: the events stay in the outbox until a fetch gets them acknowledged (no duplicates).
    navigator.sendBeacon(cfg.eventsUrl, form);
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { beacon(); } else { flush(); }
  });
  window.addEventListener("pagehide", beacon);
  window.addEventListener("online", function () {
    if (retryTimer) { window.clearTimeout(retryTimer); retryTimer = null; }
    retryDelay = 1000;
    flush();
  });

  // --- forms (consent, questionnaires, start): a sequence number, and the outbox emptied first -----------
  Array.prototype.forEach.call(document.querySelectorAll("form[data-event-form]"), function (form) {
    var clicked = null;  // browsers without SubmitEvent.submitter: remember the button pressed
    form.addEventListener("click", function (event) {
      if (event.target && event.target.tagName === "BUTTON") { clicked = event.target; }
    });
    form.addEventListener("submit", function (event) {
      if (form.dataset.ready === "1") { return; }
      event.preventDefault();
      var submitter = event.submitter || clicked;
      var go = function () {
        if (form.dataset.ready === "1") { return; }
        form.dataset.ready = "1";
        var seqInput = form.querySelector("[data-sequence]");
        if (seqInput && !seqInput.value) { seqInput.value = nextSequence(); }
        var timeInput = form.querySelector("[data-client-time]");
        if (timeInput) { timeInput.value = new Date().toISOString(); }
        if (submitter && submitter.name) {
          var hidden = document.createElement("input");
          hidden.type = "hidden"; hidden.name = submitter.name; hidden.value = submitter.value;
          form.appendChild(hidden);
        }
        form.submit();
      };
      // Earlier actions go first; if the connection is down for long, they follow from the next page.
      whenEmpty(go);
      window.setTimeout(go, 5000);
    });
  });

  // --- the closing page: held until everything is saved --------------------------------------------------
  var holding = document.querySelector("[data-hold-until-saved]");
  if (holding) {
    whenEmpty(function () {
      holding.hidden = true;
      var saved = document.getElementById("saved");
      if (saved) { saved.hidden = false; }
    });
  }

  // Exposed for the end-to-end test and for debugging: how many events are waiting.
  window.sessionlabOutbox = { pending: function () { return outbox().length; }, sequence: function () {
    return load("seq", 0);
  } };

  flush();

  // --- the search page -----------------------------------------------------------------------------------
  var app = document.getElementById("search-app");
  if (!app) { return; }

  var $ = function (id) { return document.getElementById(id); };
  var state = { queryEvent: null, pendingEvent: null, page: 1, total: null, results: [], openDoc: null,
                grades: {}, finished: false, queryText: "", pendingText: "", mark: null };
  // Queries issued in this session, kept across reloads on this device: ending a task unsearched asks first.
  var QUERIES = "queries:" + (cfg.session || "");
  var gradeLabels = {};
  (cfg.grades || []).forEach(function (g) { gradeLabels[g.value] = g.label; });

  function showMessage(text) {
    var element = $("system-message");
    element.textContent = text || "";
    element.hidden = !text;
  }

  function refusedAck(ack) {
    if (ack.ok) { return false; }
    showMessage(ack.refused || ack.error || "That could not be done.");
    if (/finished/.test(ack.refused || "")) { finish(null); }
    return true;
  }

  // --- snippets: the query's terms highlighted ------------------------------------------------------------
  // The engine's own match offsets when the answer carries them (result.highlights: [start, end] pairs in the
  // snippet); otherwise the query's words, with their common English endings (the engines stem).
  var OPERATORS = { and: 1, or: 1, not: 1 };
  function termPattern(text) {
    var stems = [];
    (String(text || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || []).forEach(function (word) {
      if (OPERATORS[word] || word.length < 2) { return; }
      var stem = word.length > 4 ? word.replace(/(ing|ed|es|s)$/, "") : word;
      stem = stem.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (stems.indexOf(stem) < 0) { stems.push(stem); }
    });
    if (!stems.length) { return null; }
    stems.sort(function (a, b) { return b.length - a.length; });
    return new RegExp("(^|[^\\p{L}\\p{N}])((?:" + stems.join("|") + ")(?:s|es|ed|ing|ings|er|ers|ion|ions|al|ly)?)" +
                      "(?![\\p{L}\\p{N}])", "giu");
  }

  function termSpans(snippet, pattern) {
    var spans = [], match;
    if (!pattern) { return spans; }
    pattern.lastIndex = 0;
    while ((match = pattern.exec(snippet)) !== null) {
      var start = match.index + match[1].length;
      spans.push([start, match.index + match[0].length]);
      if (match[0].length === 0) { pattern.lastIndex += 1; }
    }
    return spans;
  }

  function fillSnippet(element, snippet, spans) {
    var at = 0;
    snippet = snippet || "";
    spans.slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (span) {
      var start = Math.max(at, span[0] | 0), end = Math.min(snippet.length, span[1] | 0);
      if (end <= start) { return; }
      element.appendChild(document.createTextNode(snippet.slice(at, start)));
      var mark = document.createElement("mark");
      mark.textContent = snippet.slice(start, end);
      element.appendChild(mark);
      at = end;
    });
    element.appendChild(document.createTextNode(snippet.slice(at)));
  }

  function renderResults(ack) {
    if (refusedAck(ack)) { return; }
    markSend();  // the list the mark was on is replaced: the mark is final
    var pattern = termPattern(ack.query_used || state.queryText);
    state.page = ack.page;
    state.total = ack.total;
    state.results = ack.results || [];
    var message = ack.message || "";
    if (ack.query_used) { message = message || ("Showing results for: " + ack.query_used); }
    showMessage(message);
    var list = $("results");
    list.innerHTML = "";
    list.start = (ack.page - 1) * cfg.pageSize + 1;
    state.results.forEach(function (result) {
      var item = document.createElement("li");
      item.className = "result";
      item.dataset.rank = result.rank;
      item.dataset.doc = result.doc;
      var title = document.createElement("button");
      title.type = "button";
      title.className = "link result-title";
      title.textContent = result.title || ("Document " + result.doc);
      title.addEventListener("click", function () { openDocument(result); });
      var snippet = document.createElement("p");
      snippet.className = "snippet";
      fillSnippet(snippet, result.snippet,
                  Array.isArray(result.highlights) ? result.highlights : termSpans(result.snippet || "", pattern));
      var judged = document.createElement("span");
      judged.className = "judged";
      if (state.grades[result.doc] !== undefined) { judged.textContent = gradeLabels[state.grades[result.doc]]; }
      var mark = document.createElement("button");
      mark.type = "button";
      mark.className = "link scan-mark";
      mark.textContent = "I stopped scanning here";
      mark.setAttribute("aria-pressed", "false");
      mark.addEventListener("click", function () { scanMark(result.rank, item); });
      item.appendChild(title);
      item.appendChild(judged);
      item.appendChild(snippet);
      item.appendChild(mark);
      list.appendChild(item);
    });
    var shown = state.results.length;
    $("scan-help").hidden = !shown;
    if (!shown) {
      $("results-info").textContent = ack.page > 1 ? "No more results." : "No documents matched.";
    } else {
      var first = state.results[0].rank;
      $("results-info").textContent = "Results " + first + "–" + state.results[shown - 1].rank +
        (ack.total !== null && ack.total !== undefined ? " of " + ack.total : "");
    }
    var more = ack.total !== null && ack.total !== undefined ? ack.page * cfg.pageSize < ack.total
      : shown === cfg.pageSize;
    $("pager").hidden = !(ack.page > 1 || more);
    $("prev-page").disabled = ack.page <= 1;
    $("next-page").disabled = !more;
    $("page-number").textContent = "Page " + ack.page;
  }

  function waiting(text) {
    $("results-info").textContent = text;
  }

  function runQuery(text) {
    closeDocument();
    markSend();
    save(QUERIES, load(QUERIES, 0) + 1);
    var id = enqueue("query", { text: text }, function (ack) {
      if (state.pendingEvent !== id) { return; }  // a newer query or page replaced this one
      state.pendingEvent = null;
      if (ack.ok) { state.queryEvent = id; state.queryText = text; }
      renderResults(ack);
    });
    state.pendingEvent = id;
    waiting("Searching…");
  }

  function showPage(page) {
    if (!state.queryEvent || page < 1) { return; }
    closeDocument();
    markSend();
    var id = enqueue("results_page", { query_event: state.queryEvent, page: page }, function (ack) {
      if (state.pendingEvent !== id) { return; }
      state.pendingEvent = null;
      renderResults(ack);
      window.scrollTo(0, 0);
    });
    state.pendingEvent = id;
    waiting("Loading page " + page + "…");
  }

  // The panel is sticky at the window's top, but before the page scrolls it starts below the header: its height
  // leaves that room, so its foot (the grade buttons) is in the window at every scroll (issue 19, 1366x768).
  function fitDocument() {
    var top = app.getBoundingClientRect().top + window.scrollY;
    app.style.setProperty("--document-top", Math.max(0, Math.round(top)) + "px");
    // On a phone the search box is pinned above the open document (participate.css): the sheet starts below it.
    var bar = $("search-form").getBoundingClientRect();
    if (app.classList.contains("document-open") && window.getComputedStyle($("search-form")).position === "fixed") {
      app.style.setProperty("--search-bar", Math.ceil(bar.bottom) + "px");
    }
  }
  window.addEventListener("resize", fitDocument);

  function openDocument(result) {
    closeDocument();
    fitDocument();
    state.openDoc = { doc: result.doc, rank: result.rank, queryEvent: state.queryEvent, openedAt: Date.now() };
    $("document-title").textContent = result.title || ("Document " + result.doc);
    var known = typeof result.text === "string";  // results carry their documents' text
    $("document-text").textContent = known ? (result.text || "(This document has no text.)") : "Loading…";
    $("judgment-status").textContent = state.grades[result.doc] !== undefined ?
      "Your judgment: " + gradeLabels[state.grades[result.doc]] : "";
    showChosen(state.grades[result.doc]);
    $("document-view").hidden = false;
    app.classList.add("document-open");
    fitDocument();  // again: on a phone the search box is now pinned, and the sheet goes below it
    $("document-view").dataset.doc = result.doc;
    enqueue("document_open", { doc: result.doc, rank: result.rank, query_event: state.queryEvent }, function (ack) {
      if (!state.openDoc || state.openDoc.doc !== result.doc) { return; }
      if (!ack.ok) { $("document-text").textContent = ack.refused || "This document cannot be shown."; return; }
      if (!ack.document) { return; }
      $("document-title").textContent = ack.document.title || ("Document " + ack.document.doc);
      $("document-text").textContent = ack.document.text || "(This document has no text.)";
    }, known);
  }

  function closeDocument() {
    var open = state.openDoc;
    if (!open) { return; }
    state.openDoc = null;
    enqueue("document_close", { doc: open.doc, rank: open.rank, query_event: open.queryEvent,
                                dwell_ms: Date.now() - open.openedAt }, null, true);
    $("document-view").hidden = true;
    app.classList.remove("document-open");
    delete $("document-view").dataset.doc;
  }

  // The grade the participant chose is marked on its button (as on the assessor's form).
  function showChosen(grade) {
    Array.prototype.forEach.call(document.querySelectorAll(".grade-button"), function (button) {
      var chosen = grade !== undefined && parseInt(button.dataset.grade, 10) === grade;
      button.classList.toggle("chosen", chosen);
      button.setAttribute("aria-pressed", chosen ? "true" : "false");
    });
  }

  function showGrade(doc, grade) {
    state.grades[doc] = grade;
    if (state.openDoc && state.openDoc.doc === doc) {
      $("judgment-status").textContent = "Your judgment: " + gradeLabels[grade];
      showChosen(grade);
    }
    Array.prototype.forEach.call(document.querySelectorAll(".result"), function (item) {
      if (item.dataset.doc === doc) { item.querySelector(".judged").textContent = gradeLabels[grade]; }
    });
  }

  function judge(grade) {
    var open = state.openDoc;
    if (!open || gradeLabels[grade] === undefined || state.finished) { return; }
    var doc = open.doc, previous = state.grades[doc];
    showGrade(doc, grade);  // at once; the server's answer confirms it (or says why not)
    // The query that showed it: should the judgment reach the server before that query, it waits for it.
    enqueue("judgment", { doc: doc, grade: grade, query_event: open.queryEvent }, function (ack) {
      if (ack.ok) { showGrade(ack.doc, ack.grade); return; }
      if (previous !== undefined) {
        showGrade(doc, previous);  // refused: the grade the server holds is still the earlier one
      } else {
        delete state.grades[doc];
        if (state.openDoc && state.openDoc.doc === doc) { showChosen(undefined); }
        Array.prototype.forEach.call(document.querySelectorAll(".result"), function (item) {
          if (item.dataset.doc === doc) { item.querySelector(".judged").textContent = ""; }
        });
      }
      if (state.openDoc && state.openDoc.doc === doc) { $("judgment-status").textContent = ack.refused || ack.error; }
    }, true);
  }

  // "I stopped scanning here": the mark is held on the page while its result list is shown, so that a
  // mis-click can be undone (click it again) or moved; it is sent, with the time of its click, when the list
  // changes (a search, another page), the task ends or the page is left. The server keeps a query's deepest mark.
  function showMark(item) {
    Array.prototype.forEach.call(document.querySelectorAll(".result.marked"), function (el) {
      el.classList.remove("marked");
      var link = el.querySelector(".scan-mark");
      link.textContent = "I stopped scanning here";
      link.setAttribute("aria-pressed", "false");
    });
    if (!item) { return; }
    item.classList.add("marked");
    var mark = item.querySelector(".scan-mark");
    mark.textContent = "You stopped scanning here (click to undo)";
    mark.setAttribute("aria-pressed", "true");
  }

  function scanMark(rank, item) {
    if (!state.queryEvent || state.finished) { return; }
    if (state.mark && state.mark.queryEvent === state.queryEvent && state.mark.rank === rank) {
      state.mark = null;  // undone: nothing is sent
      showMark(null);
      return;
    }
    state.mark = { queryEvent: state.queryEvent, rank: rank, at: new Date().toISOString() };
    showMark(item);
  }

  function markSend() {
    var mark = state.mark;
    if (!mark) { return; }
    state.mark = null;
    enqueue("scan_mark", { query_event: mark.queryEvent, rank: mark.rank }, function (ack) {
      if (!ack.ok) { showNotice(1, ack.refused || ack.error); }
    }, true, mark.at);
  }
  window.addEventListener("pagehide", function () { markSend(); beacon(); });

  function finish(reason) {
    if (state.finished) { return; }
    closeDocument();
    if (reason) { markSend(); } else { state.mark = null; }  // ended elsewhere: a mark would be refused
    state.finished = true;
    if (reason) { enqueue("session_end", { reason: reason }); }
    Array.prototype.forEach.call(app.querySelectorAll("button, input"), function (el) { el.disabled = true; });
    waiting("Saving your search…");
    whenEmpty(function () { window.location.assign(cfg.homeUrl); });
  }

  $("search-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var text = $("query").value.trim();
    if (text && !state.finished) { runQuery(text); }
  });
  $("prev-page").addEventListener("click", function () { showPage(state.page - 1); });
  $("next-page").addEventListener("click", function () { showPage(state.page + 1); });
  $("close-document").addEventListener("click", closeDocument);
  Array.prototype.forEach.call(document.querySelectorAll(".grade-button"), function (button) {
    button.addEventListener("click", function () { judge(parseInt(button.dataset.grade, 10)); });
  });
  // Ending a task asks first (one click must not end it), and says so when nothing was searched yet.
  var QUESTIONS = { satisfied: "End this task: you found what you need?",
                    gave_up: "End this task without finding what you need?" };
  var endDialog = $("end-dialog"), endReason = null;
  function askToEnd(reason) {
    if (state.finished) { return; }
    endReason = reason;
    $("end-question").textContent = QUESTIONS[reason] || "End this task?";
    $("end-no-queries").hidden = load(QUERIES, 0) > 0;
    if (endDialog.showModal) {
      if (!endDialog.open) { endDialog.showModal(); }
    } else {
      endDialog.setAttribute("open", "");
    }
    $("end-cancel").focus();  // Enter keeps searching: ending takes a deliberate choice
  }
  function closeEndDialog() {
    if (endDialog.close) { if (endDialog.open) { endDialog.close(); } } else { endDialog.removeAttribute("open"); }
  }
  $("end-cancel").addEventListener("click", function () { endReason = null; closeEndDialog(); });
  $("end-confirm").addEventListener("click", function () {
    var reason = endReason;
    endReason = null;
    closeEndDialog();
    if (reason) { finish(reason); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-end]"), function (button) {
    button.addEventListener("click", function () { askToEnd(button.dataset.end); });
  });
  document.addEventListener("keydown", function (event) {
    if (!state.openDoc || endDialog.open || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) { return; }
    if (/^[0-9]$/.test(event.key) && gradeLabels[parseInt(event.key, 10)] !== undefined) {
      event.preventDefault();
      judge(parseInt(event.key, 10));
    } else if (event.key === "Escape") {
      closeDocument();
    }
  });

  // --- the page opened again (a reload, another device): what it showed comes back ----------------------
  // The server sends the last list shown (the last query's last page, as its acknowledgement carried it) and
  // the grades it holds; nothing is logged for it here (the server logged the reload). Judgments and a query
  // still in this device's outbox are newer than what the server holds: their grades are shown, and the
  // query's answer, when it comes, replaces the restored list.
  function restore(restored) {
    var pendingQuery = null;
    outbox().forEach(function (event) {
      if (event.session !== cfg.session) { return; }
      if (event.type === "judgment" && event.data && gradeLabels[event.data.grade] !== undefined) {
        state.grades[event.data.doc] = event.data.grade;
      } else if (event.type === "query" || event.type === "results_page") {
        pendingQuery = event;
      }
    });
    if (restored) {
      Object.keys(restored.grades || {}).forEach(function (doc) {
        if (state.grades[doc] === undefined) { state.grades[doc] = restored.grades[doc]; }
      });
      state.queryEvent = restored.query_event;
      state.queryText = restored.query_text;
      if (!load(QUERIES, 0)) { save(QUERIES, 1); }
      renderResults({ ok: true, query: restored.query, page: restored.page, total: restored.total,
                      message: restored.message, query_used: restored.query_used, results: restored.results });
    }
    if (pendingQuery) {
      var id = pendingQuery.id, text = pendingQuery.data && pendingQuery.data.text;
      state.pendingEvent = id;
      handlers[id] = function (ack) {
        if (state.pendingEvent !== id) { return; }
        state.pendingEvent = null;
        if (ack.ok && pendingQuery.type === "query") { state.queryEvent = id; state.queryText = text; }
        renderResults(ack);
      };
      if (pendingQuery.type === "query" && text) { $("query").value = text; }
      waiting(pendingQuery.type === "query" ? "Searching…" : "Loading…");
    }
  }
  restore(cfg.restored || null);

  // The time limit: the page's own clock ends the session as timed_out (the server does too, a little later).
  if (cfg.deadline) {
    var skew = cfg.serverNow ? Date.parse(cfg.serverNow) - Date.now() : 0;
    var deadline = Date.parse(cfg.deadline);
    var timer = $("timer");
    timer.hidden = false;
    var tick = function () {
      var left = Math.max(0, Math.round((deadline - (Date.now() + skew)) / 1000));
      timer.textContent = "Time left: " + Math.floor(left / 60) + ":" + ("0" + (left % 60)).slice(-2);
      if (left <= 0) {
        window.clearInterval(interval);
        finish("timed_out");
      }
    };
    var interval = window.setInterval(tick, 1000);
    tick();
  }

}());
