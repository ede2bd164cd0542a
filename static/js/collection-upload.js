// The progress of a collection upload, polled from the row its Celery task updates (so a reload loses nothing).
(function () {
  "use strict";
  var box = document.getElementById("upload");
  if (!box) return;
  var url = box.getAttribute("data-status-url");
  var bar = document.getElementById("upload-progress");
  var percent = document.getElementById("upload-percent");
  var label = document.getElementById("upload-label");
  var stage = document.getElementById("upload-stage");
  var error = document.getElementById("upload-error");
  var done = document.getElementById("upload-done");
  var link = document.getElementById("upload-collection");
  var retry = document.getElementById("upload-retry");

  function show(state) {
    bar.value = state.progress;
    bar.textContent = state.progress + "%";
    percent.textContent = state.progress + "%";
    label.textContent = state.label;
    stage.textContent = state.stage;
    error.textContent = state.error;
    error.hidden = !state.error;
    retry.hidden = state.status !== "failed";
    if (state.collection_url) {
      link.href = state.collection_url;
      done.hidden = false;
    }
    box.setAttribute("data-finished", state.finished ? "1" : "0");
  }

  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (state) {
        show(state);
        if (!state.finished) window.setTimeout(poll, 1000);
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }
  poll();
})();
