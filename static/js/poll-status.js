/* Following a job's status JSON, the same way on every page that shows one (a collection upload, a scoring
 * run, a power plan, the participant's completion code). No build step: an ES module served as it is.
 *
 * pollStatus(url, {onStatus, ready, box}) fetches url and hands the parsed answer to onStatus, which shows
 * it and returns true once there is nothing more to follow (the job is finished or failed: the page has
 * shown it, reloaded or moved on). The policy, one for every page:
 *   - while the job runs, the next request leaves EVERY_MS after the last answer;
 *   - a request that fails (no answer, an HTTP error, an answer that is not JSON) is tried again after
 *     FIRST_RETRY_MS, then twice as long each time up to MAX_RETRY_MS, back to EVERY_MS once one succeeds;
 *     meanwhile a notice in `box` says so (a line: class poll-error, role=status), gone at the next answer;
 *   - ready(), if given, is asked first: while it is false nothing is fetched and it is asked again after
 *     NOT_READY_MS (the completion page waits for its outbox and the network).
 * Returns {stop()}. */
export const EVERY_MS = 1000;
export const FIRST_RETRY_MS = 2000;
export const MAX_RETRY_MS = 8000;  // as the participant outbox's longest wait between tries
export const NOT_READY_MS = 500;

function errorNotice(box) {
  let element = null;
  return {
    show: function (error, delay) {
      if (!box) { return; }
      if (!element) {
        element = document.createElement("p");
        element.className = "message error poll-error";
        element.setAttribute("role", "status");
        box.appendChild(element);
      }
      element.textContent = "Could not get the latest status: " + error.message + ". Trying again in " +
        Math.round(delay / 1000) + " s.";
      element.hidden = false;
    },
    clear: function () {
      if (element) { element.hidden = true; element.textContent = ""; }
    },
  };
}

export function pollStatus(url, options) {
  const notice = errorNotice(options.box || null);
  let retry = FIRST_RETRY_MS;
  let stopped = false;

  function later(delay) {
    if (!stopped) { window.setTimeout(tick, delay); }
  }

  function tick() {
    if (stopped) { return; }
    if (options.ready && !options.ready()) { later(NOT_READY_MS); return; }
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
      .catch(function () { throw new Error("no answer from the server"); })
      .then(function (response) {
        if (!response.ok) { throw new Error("the server answered HTTP " + response.status); }
        return response.json().catch(function () { throw new Error("the server's answer is not a status"); });
      })
      .then(function (status) {
        notice.clear();
        retry = FIRST_RETRY_MS;
        if (options.onStatus(status)) { stopped = true; return; }
        later(EVERY_MS);
      })
      .catch(function (error) {
        notice.show(error, retry);
        later(retry);
        retry = Math.min(retry * 2, MAX_RETRY_MS);
      });
  }

  tick();
  return { stop: function () { stopped = true; } };
}
