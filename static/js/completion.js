/* SessionLab: the last page's completion code (docs/recruitment.md). The code is shown, and the participant sent
 * to the panel's completion URL (MTurk: a form posted to its externalSubmit), only once the outbox is empty and
 * the server says it holds every event up to the page's last sequence number: a redirect that beats the upload
 * loses data (jsPsych users lost it so).
 * Until then it asks again; offline it waits. Plain JS, no build step. */
(function () {
  "use strict";
  var box = document.getElementById("completion");
  if (!box) { return; }
  var done = false;

  function pending() { return window.sessionlabOutbox ? window.sessionlabOutbox.pending() : 0; }
  function lastSequence() { return window.sessionlabOutbox ? window.sessionlabOutbox.sequence() : 0; }

  function reveal(completion) {
    done = true;
    document.getElementById("completion-wait").hidden = true;
    document.getElementById("completion-code").textContent = completion.code;
    document.getElementById("completion-ready").hidden = false;
    box.dataset.confirmed = "1";
    if (completion.submit) {
      // MTurk: the HIT is submitted by a form posted to its externalSubmit (the address the server allowed,
      // and the page's Content-Security-Policy names), built only now that the data are confirmed.
      var form = document.createElement("form");
      form.id = "completion-form";
      form.method = "post";
      form.action = completion.submit.action;
      Object.keys(completion.submit.fields).forEach(function (name) {
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = name;
        input.value = completion.submit.fields[name];
        form.appendChild(input);
      });
      var button = document.createElement("button");
      button.type = "submit";
      button.textContent = "Submit the HIT";
      form.appendChild(button);
      var holder = document.getElementById("completion-submit");
      holder.appendChild(form);
      holder.hidden = false;
      window.setTimeout(function () { form.submit(); }, 1500);
    } else if (completion.redirect_url) {
      var link = document.getElementById("completion-link");
      link.href = completion.redirect_url;
      document.getElementById("completion-redirect").hidden = false;
      window.setTimeout(function () { window.location.assign(completion.redirect_url); }, 1500);
    } else {
      document.getElementById("completion-paste").hidden = false;
    }
  }

  function check() {
    if (done) { return; }
    if (pending() > 0 || !navigator.onLine) { window.setTimeout(check, 500); return; }
    fetch(box.dataset.statusUrl, { credentials: "same-origin", cache: "no-store" }).then(function (response) {
      if (!response.ok) { throw new Error(String(response.status)); }
      return response.json();
    }).then(function (status) {
      if (status.completion && status.last_sequence >= lastSequence() && pending() === 0) {
        reveal(status.completion);
      } else {
        window.setTimeout(check, 1000);
      }
    }).catch(function () { window.setTimeout(check, 2000); });
  }

  window.addEventListener("load", check);
})();
