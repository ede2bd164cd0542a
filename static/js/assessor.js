/* The assessor's form: the grade buttons answer to their number keys, ← goes back, → skips.
   Plain script, no build; the page works without it (buttons and links). */
(function () {
  "use strict";
  // The progress bar's width: set here, not in a style attribute, which the Content-Security-Policy refuses.
  var fill = document.querySelector(".progress-fill[data-percent]");
  if (fill) fill.style.width = fill.getAttribute("data-percent") + "%";

  var form = document.getElementById("grade-form");
  if (!form) return;
  var sent = false;

  function choose(button) {
    if (sent) return; // one grade per page: a held key must not post twice
    sent = true;
    button.classList.add("chosen");
    // requestSubmit keeps the button's name=value in the posted data, as a click would.
    if (form.requestSubmit) form.requestSubmit(button);
    else button.click();
  }

  form.addEventListener("submit", function () { sent = true; });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    if (target && target.isContentEditable) return;
    if (/^[0-9]$/.test(event.key)) {
      var button = form.querySelector('button[data-grade="' + event.key + '"]');
      if (button) { event.preventDefault(); choose(button); }
      return;
    }
    var link = null;
    if (event.key === "ArrowLeft") link = document.getElementById("back");
    if (event.key === "ArrowRight") link = document.getElementById("skip");
    if (link) { event.preventDefault(); window.location.href = link.href; }
  });
  // Tells a waiting test (and a curious reader of the DOM) that the keys now answer.
  form.dataset.keys = "ready";

  var bar = document.querySelector(".progress");
  if (bar) {
    var judged = Number(bar.dataset.judged), total = Number(bar.dataset.total);
    bar.title = judged + " of " + total + " judged";
  }
})();
