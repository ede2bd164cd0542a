/* The study page's participants' progress, refreshed without a reload: every EVERY_MS while the tab is
 * visible (and at once when it becomes visible again), the page fetches its progress fragment
 * (data-progress-url: templates/studies/_progress.html, rendered by the same includes as the page) and
 * swaps in the counts and the participant rows. A failed request keeps what is shown and tries again at the
 * next turn. No build step: an ES module served as it is. */
export const EVERY_MS = 5000;

const section = document.querySelector("#participants-progress[data-progress-url]");

function swap(fresh, id, target) {
  const found = fresh.getElementById(id);
  if (found && target) { target.innerHTML = found.innerHTML; }
}

function refresh() {
  return fetch(section.dataset.progressUrl, { credentials: "same-origin", headers: { Accept: "text/html" } })
    .then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.text();
    })
    .then(function (html) {
      const fresh = new DOMParser().parseFromString(html, "text/html");
      swap(fresh, "study-counts", document.getElementById("study-counts"));
      swap(fresh, "participants-count", document.getElementById("participants-count"));
      swap(fresh, "participants-rows", section.querySelector("#participants tbody"));
      section.dataset.refreshedAt = new Date().toISOString();
    })
    .catch(function () { /* shown as it was; the next turn tries again */ });
}

let timer = null;

function schedule() {
  clearTimeout(timer);
  if (!document.hidden) { timer = setTimeout(function () { refresh().then(schedule); }, EVERY_MS); }
}

if (section) {
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) { refresh().then(schedule); } else { clearTimeout(timer); }
  });
  schedule();
}
