/* What was on screen (docs/running-a-study.md, "Exposure and attention"): for each result of the
 * page shown, when it first entered the viewport and when it last left it, how long it was at least half
 * visible (only while the tab is visible), the largest fraction of it ever visible, the pointer's dwell and entries on it; and how far
 * down the list the page was scrolled. Reported as one compact `exposure` event per page and report
 * (studies/participation/events/exposure.py): when the page is replaced, when the tab is hidden or left, and every
 * REPORT_MS while it stays. Each report carries what happened since the last one; the server sums them.
 * Nothing runs when the study does not record exposure (cfg.exposure false) or without IntersectionObserver. */
import { cfg } from "./config.js";
import { enqueue, onLeaving } from "./outbox.js";
import { byId } from "./search-state.js";

const REPORT_MS = 15000;
const VISIBLE = 0.5;  // a result counts as seen while at least half of it is in the viewport
const THRESHOLDS = [0, 0.1, 0.25, 0.5, 0.75, 0.9, 1];

let page = null;       // {queryEvent, page, shownAt, ranks: {rank: tally}, scroll}
let observer = null;
let timer = null;

function now() { return window.performance.now(); }

function tally(rank) {
  if (!page.ranks[rank]) {
    page.ranks[rank] = { start: null, visibleMs: 0, since: null, until: 0, ratio: 0, max: 0, hoverMs: 0,
                         hovers: 0, hoverSince: null, reported: false };
  }
  return page.ranks[rank];
}

/* The result stops counting as seen at `at`: its visible time grows, and `until` (ms after the page was
 * shown) says when it last was. */
function leave(entry, at) {
  entry.visibleMs += at - entry.since;
  entry.since = null;
  entry.until = Math.max(entry.until, at - page.shownAt);
}

function close(entry, at) {
  if (entry.since !== null) { leave(entry, at); }
  if (entry.hoverSince !== null) { entry.hoverMs += at - entry.hoverSince; entry.hoverSince = at; }
}

function onIntersect(entries) {
  const at = now();
  entries.forEach(function (change) {
    const entry = tally(parseInt(change.target.dataset.rank, 10));
    const ratio = change.isIntersecting ? change.intersectionRatio : 0;
    entry.ratio = ratio;
    if (ratio > 0 && entry.start === null) { entry.start = at - page.shownAt; }
    entry.max = Math.max(entry.max, ratio);
    if (ratio >= VISIBLE && entry.since === null && !document.hidden) { entry.since = at; }
    if (ratio < VISIBLE && entry.since !== null) { leave(entry, at); }
  });
  noteScroll();
}

function noteScroll() {
  const list = byId("results");
  if (!page || !list) { return; }
  const box = list.getBoundingClientRect();
  if (box.height <= 0) { return; }
  const seen = Math.min(1, Math.max(0, (window.innerHeight - box.top) / box.height));
  page.scroll = Math.max(page.scroll, seen);
}

/* The report of what happened since the last one (null when nothing did); the tallies go on from zero. */
function reportItems(at) {
  const items = [];
  Object.keys(page.ranks).forEach(function (key) {
    const entry = page.ranks[key];
    if (entry.start === null && !entry.hovers) { return; }
    const open = entry.since !== null;
    close(entry, at);
    if (open && !document.hidden) { entry.since = at; }
    const visible = Math.round(entry.visibleMs);
    const hover = Math.round(entry.hoverMs);
    if (entry.reported && !visible && !hover && !entry.newHovers) { return; }
    items.push([parseInt(key, 10), Math.round(entry.start || 0), visible, Math.round(entry.max * 1000), hover,
                entry.newHovers || 0, Math.round(entry.until)]);
    entry.visibleMs = 0;
    entry.until = 0;
    entry.hoverMs = 0;
    entry.newHovers = 0;
    entry.reported = true;
  });
  return items;
}

export function exposureReport() {
  if (!page) { return; }
  const items = reportItems(now());
  const scroll = Math.round(page.scroll * 1000);
  if (!items.length) { return; }
  enqueue("exposure", { query_event: page.queryEvent, page: page.page, items: items.slice(0, 200),
                        scroll_permille: scroll }, null, true);
}

function onHover(event) {
  const item = event.target.closest && event.target.closest(".result");
  if (!item || !page || !item.dataset.rank) { return; }
  const entry = tally(parseInt(item.dataset.rank, 10));
  const at = now();
  if (event.type === "mouseover" && entry.hoverSince === null) {
    entry.hoverSince = at;
    entry.hovers += 1;
    entry.newHovers = (entry.newHovers || 0) + 1;
  } else if (event.type === "mouseout" && (!event.relatedTarget || !item.contains(event.relatedTarget))) {
    if (entry.hoverSince !== null) { entry.hoverMs += at - entry.hoverSince; entry.hoverSince = null; }
  }
}

function onVisibility() {
  if (!page) { return; }
  const at = now();
  Object.keys(page.ranks).forEach(function (key) {
    const entry = page.ranks[key];
    if (document.hidden) {
      if (entry.since !== null) { leave(entry, at); }
    } else if (entry.ratio >= VISIBLE && entry.since === null) {
      entry.since = at;
    }
  });
}

/* A new page of results is on screen: the last one's report goes, the new one is watched. `items`: the
 * elements (each with data-rank) that are its results; a generative answer's cited sources (answers.js). */
export function watchResults(queryEvent, pageNumber, items) {
  if (!cfg.exposure || !window.IntersectionObserver) { return; }
  exposureReport();
  if (observer) { observer.disconnect(); }
  page = { queryEvent: queryEvent, page: pageNumber, shownAt: now(), ranks: {}, scroll: 0 };
  observer = new window.IntersectionObserver(onIntersect, { threshold: THRESHOLDS });
  Array.prototype.forEach.call(items || document.querySelectorAll("#results .result"), function (item) {
    observer.observe(item);
  });
  if (!timer) { timer = window.setInterval(exposureReport, REPORT_MS); }
}

export function startExposure() {
  if (!cfg.exposure || !window.IntersectionObserver) { return; }
  [byId("results"), byId("conversation")].forEach(function (list) {
    if (list) {
      list.addEventListener("mouseover", onHover);
      list.addEventListener("mouseout", onHover);
    }
  });
  window.addEventListener("scroll", noteScroll, { passive: true });
  document.addEventListener("visibilitychange", onVisibility);
  onLeaving(exposureReport);  // with the beacon, when the tab is hidden or left
}
