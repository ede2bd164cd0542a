/* SessionLab dashboards: plot every [data-url] chart from its JSON endpoint with the vendored Plotly, and poll
   a running scoring run's status. No build step, no CDN. */
(function () {
  "use strict";

  function plot(element) {
    fetch(element.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (payload) {
        var figure = payload.figure;
        Plotly.newPlot(element, figure.data, figure.layout, {
          responsive: true,
          displaylogo: false,
          // Plotly's own camera button: the browser exports the figure as PNG.
          toImageButtonOptions: { format: "png", filename: element.dataset.name || "chart", scale: 2 },
        });
        var notes = element.parentNode.querySelector(".chart-notes");
        if (notes) {
          notes.textContent = "";
          (payload.notes || []).forEach(function (text) {
            var item = document.createElement("li");
            item.textContent = text;
            notes.appendChild(item);
          });
        }
      })
      .catch(function (error) {
        element.textContent = "This chart could not be loaded (" + error.message + ").";
      });
  }

  function poll(box) {
    var bar = box.querySelector("progress");
    var text = box.querySelector(".progress-text");
    var status = box.querySelector(".status-text");
    function tick() {
      fetch(box.dataset.statusUrl, { credentials: "same-origin" })
        .then(function (response) { return response.json(); })
        .then(function (run) {
          bar.max = Math.max(run.total, 1);
          bar.value = run.done;
          text.textContent = run.done + "/" + run.total + " sessions";
          status.textContent = run.status;
          if (run.finished) { window.location.reload(); } else { window.setTimeout(tick, 1000); }
        })
        .catch(function () { window.setTimeout(tick, 3000); });
    }
    tick();
  }

  document.querySelectorAll(".chart[data-url]").forEach(plot);
  document.querySelectorAll(".run-status[data-status-url]").forEach(function (box) {
    if (box.dataset.finished !== "1") { poll(box); }
  });
})();
