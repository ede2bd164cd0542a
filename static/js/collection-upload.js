/* The progress of a collection upload, polled from the row its Celery task updates (so a reload loses
 * nothing), with the shared status follower (poll-status.js). An ES module, no build step. */
import { pollStatus } from "./poll-status.js";

const box = document.getElementById("upload");

function show(state) {
  const bar = document.getElementById("upload-progress");
  const error = document.getElementById("upload-error");
  bar.value = state.progress;
  bar.textContent = state.progress + "%";
  document.getElementById("upload-percent").textContent = state.progress + "%";
  document.getElementById("upload-label").textContent = state.label;
  document.getElementById("upload-stage").textContent = state.stage;
  error.textContent = state.error;
  error.hidden = !state.error;
  document.getElementById("upload-retry").hidden = state.status !== "failed";
  if (state.collection_url) {
    document.getElementById("upload-collection").href = state.collection_url;
    document.getElementById("upload-done").hidden = false;
  }
  box.setAttribute("data-finished", state.finished ? "1" : "0");
}

if (box) {
  pollStatus(box.getAttribute("data-status-url"), {
    box: box,
    onStatus: function (state) {
      show(state);
      return state.finished;
    },
  });
}
