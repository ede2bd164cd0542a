/* The step forms (consent, questionnaires, start: form[data-event-form]) take a sequence number and the
 * client's time, and are posted only once the outbox is empty; the closing page ([data-hold-until-saved])
 * says "saved" only then. */
import { whenEmpty } from "./outbox.js";
import { nextSequence } from "./storage.js";

const SUBMIT_ANYWAY_MS = 5000;

function holdUntilSent(form) {
  let clicked = null;  // browsers without SubmitEvent.submitter: remember the button pressed
  form.addEventListener("click", function (event) {
    if (event.target && event.target.tagName === "BUTTON") { clicked = event.target; }
  });
  form.addEventListener("submit", function (event) {
    if (form.dataset.ready === "1") { return; }
    event.preventDefault();
    const submitter = event.submitter || clicked;
    const go = function () {
      if (form.dataset.ready === "1") { return; }
      form.dataset.ready = "1";
      const seqInput = form.querySelector("[data-sequence]");
      if (seqInput && !seqInput.value) { seqInput.value = nextSequence(); }
      const timeInput = form.querySelector("[data-client-time]");
      if (timeInput) { timeInput.value = new Date().toISOString(); }
      if (submitter && submitter.name) {
        const hidden = document.createElement("input");
        hidden.type = "hidden"; hidden.name = submitter.name; hidden.value = submitter.value;
        form.appendChild(hidden);
      }
      form.submit();
    };
    // Earlier actions go first; if the connection is down for long, they follow from the next page.
    whenEmpty(go);
    window.setTimeout(go, SUBMIT_ANYWAY_MS);
  });
}

export function wireEventForms() {
  Array.prototype.forEach.call(document.querySelectorAll("form[data-event-form]"), holdUntilSent);
}

// The closing page: held until everything is saved.
export function holdUntilSaved() {
  const holding = document.querySelector("[data-hold-until-saved]");
  if (!holding) { return; }
  whenEmpty(function () {
    holding.hidden = true;
    const saved = document.getElementById("saved");
    if (saved) { saved.hidden = false; }
  });
}
