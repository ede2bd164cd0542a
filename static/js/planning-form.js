/* SessionLab planner's form: only the chosen mode's fields are shown. Each mode's fieldset
 * (data-modes="specified", "pilot simulated", ...) is hidden and disabled (so not sent) unless the effect
 * picked is one of its modes; the server ignores another mode's fields anyway (scoring/planning/views.py).
 * An ES module, no inline script (CSP). */
const form = document.querySelector("form.planning-form");
const effect = form && form.querySelector("select[name=effect]");

function show() {
  for (const set of form.querySelectorAll("fieldset[data-modes]")) {
    const on = set.dataset.modes.split(" ").includes(effect.value);
    set.hidden = !on;
    set.disabled = !on;
  }
}

if (effect) {
  effect.addEventListener("change", show);
  show();
}
