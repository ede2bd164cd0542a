/* SessionLab planner: a power plan's curve is plotted by charts.js (loaded first, as on every chart page);
 * this follows a running plan's progress, re-plotting the counts finished so far (the page reloads when it
 * is finished). An ES module, no build step, no CDN, no inline script (CSP). */
const charts = window.SessionLabCharts;
const chart = document.querySelector(".chart[data-url]");
const box = document.querySelector(".plan-status[data-status-url]");

if (box && box.dataset.finished !== "1") {
  charts.follow(box, {
    unit: box.dataset.unit || "simulated studies",
    onTick: function () { if (chart) { charts.plot(chart); } },
  });
}
