/* SessionLab: the last page's completion code (docs/recruitment.md). The code is shown, and the participant
 * sent to the panel's completion URL (MTurk: a form posted to its externalSubmit), only once the outbox is
 * empty and the server says it holds every event up to the page's last sequence number: a redirect that
 * beats the upload loses data (jsPsych users lost it so). Until then it asks again, with the shared status
 * follower (poll-status.js); offline, or with events still in the outbox, it waits. An ES module, no build
 * step. */
import { pollStatus } from "./poll-status.js";

const LEAVE_AFTER_MS = 1500;  // the code is on the screen a moment before the page leaves
const box = document.getElementById("completion");

function pending() { return window.sessionlabOutbox ? window.sessionlabOutbox.pending() : 0; }
function lastSequence() { return window.sessionlabOutbox ? window.sessionlabOutbox.sequence() : 0; }

// MTurk: the HIT is submitted by a form posted to its externalSubmit (the address the server allowed, and
// the page's Content-Security-Policy names), built only now that the data are confirmed.
function submitForm(submit) {
  const form = document.createElement("form");
  form.id = "completion-form";
  form.method = "post";
  form.action = submit.action;
  Object.keys(submit.fields).forEach(function (name) {
    const input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = submit.fields[name];
    form.appendChild(input);
  });
  const button = document.createElement("button");
  button.type = "submit";
  button.textContent = "Submit the HIT";
  form.appendChild(button);
  const holder = document.getElementById("completion-submit");
  holder.appendChild(form);
  holder.hidden = false;
  window.setTimeout(function () { form.submit(); }, LEAVE_AFTER_MS);
}

function reveal(completion) {
  document.getElementById("completion-wait").hidden = true;
  document.getElementById("completion-code").textContent = completion.code;
  document.getElementById("completion-ready").hidden = false;
  box.dataset.confirmed = "1";
  if (completion.submit) {
    submitForm(completion.submit);
  } else if (completion.redirect_url) {
    const link = document.getElementById("completion-link");
    link.href = completion.redirect_url;
    document.getElementById("completion-redirect").hidden = false;
    window.setTimeout(function () { window.location.assign(completion.redirect_url); }, LEAVE_AFTER_MS);
  } else {
    document.getElementById("completion-paste").hidden = false;
  }
}

function confirmed(status) {
  if (status.completion && !status.completion.code && status.completion.message) {
    // No code yet (the study's pool ran out): say so, and keep asking until the researcher adds codes.
    document.getElementById("completion-wait").textContent = status.completion.message;
    return false;
  }
  if (status.completion && status.last_sequence >= lastSequence() && pending() === 0) {
    reveal(status.completion);
    return true;
  }
  return false;
}

if (box) {
  window.addEventListener("load", function () {
    pollStatus(box.dataset.statusUrl, {
      box: box,
      ready: function () { return pending() === 0 && navigator.onLine; },
      onStatus: confirmed,
    });
  });
}
