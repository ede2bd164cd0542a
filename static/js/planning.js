/* SessionLab planner: a power plan's curve is plotted by charts.js (loaded first, as on every chart page);
   this follows a running plan's progress, re-plotting the counts finished so far (the page reloads when it
   is finished). No build step, no CDN, no inline script (CSP). */
(function () {
  "use strict";

  var charts = window.SessionLabCharts;
  var chart = document.querySelector(".chart[data-url]");
  var box = document.querySelector(".plan-status[data-status-url]");
  if (box && box.dataset.finished !== "1") {
    charts.follow(box, {
      unit: box.dataset.unit || "simulated studies",
      every: 1500,
      onTick: function () { if (chart) { charts.plot(chart); } },
    });
  }
})();
