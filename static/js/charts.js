/* SessionLab charts: plot every [data-url] chart from its JSON endpoint with the vendored Plotly, and follow
   a running job's progress with the shared status follower (a scoring run here; planning.js follows a power
   plan with the same two functions, exported as window.SessionLabCharts). An ES module: no build step, no
   CDN, no inline script (CSP). */
import { pollStatus } from "./poll-status.js";
import { fitTables } from "./table-fit.js";

// Plot (or re-plot in place: Plotly.react) the figure of element.dataset.url; its notes, if any, go to the
// .chart-notes list beside it. data-error names the chart in the message shown if it cannot be loaded.
function plot(element) {
  return fetch(element.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.json();
    })
    .then(function (payload) {
      const figure = payload.figure;
      // A figure of a given height (a table's, sized to its rows) is that tall: no CSS minimum under it.
      element.classList.toggle("chart-sized", Boolean(figure.layout && figure.layout.height));
      const drawn = Plotly.react(element, figure.data, figure.layout, {
        responsive: true,
        displaylogo: false,
        // Plotly's own camera button: the browser exports the figure as PNG.
        toImageButtonOptions: { format: "png", filename: element.dataset.name || "chart", scale: 2 },
      });
      if (element.dataset.replay && element.on) {  // Figure 4: a session's line opens its replay
        element.removeAllListeners && element.removeAllListeners("plotly_click");
        element.on("plotly_click", function (event) {
          const point = event.points && event.points[0];
          if (point && point.customdata) {
            window.location.href = element.dataset.replay.replace("/0/replay/", "/" + point.customdata + "/replay/");
          }
        });
      }
      const notes = element.parentNode.querySelector(".chart-notes");
      if (notes) {
        notes.textContent = "";
        // The population is stated once, at the top of the page (#population-counted): a card repeats only
        // the one line saying how its own differs, and its notes after the population's.
        let shown = payload.notes || [];
        const top = document.getElementById("population-counted");
        if (payload.population && top) {
          shown = shown.slice(payload.population.notes);
          if (payload.population.key !== top.dataset.populationKey) { shown.unshift(payload.population.line); }
        }
        shown.forEach(function (text) {
          const item = document.createElement("li");
          item.textContent = text;
          notes.appendChild(item);
        });
      }
      // Its tables sized to their rows once Plotly has settled them (table-fit.js).
      return drawn.then(function () { fitTables(element); });
    })
    .catch(function (error) {
      element.textContent = (element.dataset.error || "This chart") + " could not be loaded (" +
        error.message + ").";
    });
}

// Poll box.dataset.statusUrl ({done, total, status, finished, reasons}) into the box's progress bar and texts
// until the job is finished (a scoring run: done and current, or no re-score coming), then reload the page. options: unit (the counted things), onTick (after each answer).
function follow(box, options) {
  const bar = box.querySelector("progress");
  const text = box.querySelector(".progress-text");
  const status = box.querySelector(".status-text");
  pollStatus(box.dataset.statusUrl, {
    box: box,
    onStatus: function (job) {
      bar.max = Math.max(job.total, 1);
      bar.value = job.done;
      // A job may say it in words (a scoring run: its size and its last update), else done/total.
      text.textContent = job.text || (job.done + "/" + job.total + " " + options.unit);
      status.textContent = job.status_text || job.status;
      // A done run that is not current yet (a default run being brought up to date): say why until it is.
      const reasons = box.querySelector(".freshness-reasons");
      if (reasons && job.reasons && job.reasons.length) { reasons.textContent = job.reasons.join("; "); }
      if (job.finished) { window.location.reload(); return true; }
      if (options.onTick) { options.onTick(job); }
      return false;
    },
  });
}

window.SessionLabCharts = { plot: plot, follow: follow };

// A dashboard holds a dozen charts: the ones in view (or nearly) are drawn first, then the rest one at a time
// once the page has loaded, so the page is usable at once and every chart is there for whoever scrolls, prints
// or exports it. element.dataset.drawn marks a chart asked for.
const waiting = Array.from(document.querySelectorAll(".chart[data-url]"));

function draw(element) {
  if (element.dataset.drawn) { return Promise.resolve(); }
  element.dataset.drawn = "1";
  return plot(element);
}

if ("IntersectionObserver" in window) {
  const inView = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) { inView.unobserve(entry.target); draw(entry.target); }
    });
  }, { rootMargin: "300px" });
  waiting.forEach(function (element) { inView.observe(element); });
}

function drawTheRest() {
  const next = waiting.find(function (element) { return !element.dataset.drawn; });
  if (next) { draw(next).finally(function () { window.setTimeout(drawTheRest, 0); }); }
}

if (document.readyState === "complete") { window.setTimeout(drawTheRest, 0); }
else { window.addEventListener("load", function () { window.setTimeout(drawTheRest, 0); }); }
document.querySelectorAll(".run-status[data-status-url]").forEach(function (box) {
  if (box.dataset.finished !== "1") { follow(box, { unit: "sessions" }); }
});
