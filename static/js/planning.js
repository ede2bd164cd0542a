/* SessionLab planner: draw a power plan's curve from its JSON with the vendored Plotly, and follow a running
   plan's progress (the page reloads when it is finished). No build step, no CDN, no inline script (CSP). */
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
        Plotly.react(element, figure.data, figure.layout, {
          responsive: true,
          displaylogo: false,
          toImageButtonOptions: { format: "png", filename: element.dataset.name || "power", scale: 2 },
        });
      })
      .catch(function (error) {
        element.textContent = "The power curve could not be loaded (" + error.message + ").";
      });
  }

  function follow(box, chart) {
    var bar = box.querySelector("progress");
    var text = box.querySelector(".progress-text");
    var status = box.querySelector(".status-text");
    function tick() {
      fetch(box.dataset.statusUrl, { credentials: "same-origin" })
        .then(function (response) { return response.json(); })
        .then(function (plan) {
          bar.max = Math.max(plan.total, 1);
          bar.value = plan.done;
          text.textContent = plan.done + "/" + plan.total + " " + (box.dataset.unit || "simulated studies");
          status.textContent = plan.status;
          if (plan.finished) { window.location.reload(); return; }
          if (chart) { plot(chart); }  // the counts finished so far
          window.setTimeout(tick, 1500);
        })
        .catch(function () { window.setTimeout(tick, 3000); });
    }
    tick();
  }

  var chart = document.querySelector(".chart[data-url]");
  if (chart) { plot(chart); }
  var box = document.querySelector(".plan-status[data-status-url]");
  if (box && box.dataset.finished !== "1") { follow(box, chart); }
})();
