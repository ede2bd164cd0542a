/* SessionLab participant pages, the entry point (loaded as <script type="module">: ES modules served as
 * they are, no build step). The modules under participant/, one concern each:
 *   outbox.js, acks.js, status.js, clock.js, storage.js  the event outbox: batched, acknowledged, retried
 *   forms.js                                              step forms posted once the outbox is empty
 *   search-page.js and the modules it wires               the search page
 *   exposure.js, attention.js                             what was on screen, when the page was away
 * Nothing runs on a page without the client settings (config.js). A module runs once the page is parsed,
 * a moment after its elements appear: body[data-participant-script=ready] tells a waiting test (and a
 * curious reader of the DOM) that the page now answers. */
import { attentionReport } from "./participant/attention.js";
import { cfg, present } from "./participant/config.js";
import { exposureReport } from "./participant/exposure.js";
import { holdUntilSaved, wireEventForms } from "./participant/forms.js";
import { exposeOutbox, flush, startOutbox } from "./participant/outbox.js";
import { startSearchPage } from "./participant/search-page.js";
import { forgetAll } from "./participant/storage.js";

if (present && cfg.withdrawn) {
  forgetAll();  // nothing of theirs is sent, nor says it could not be saved
} else if (present) {
  startOutbox();
  wireEventForms();
  holdUntilSaved();
  exposeOutbox();
  flush();
  startSearchPage();
  // For the end-to-end tests and debugging: send what was seen and when the page was away, now.
  window.sessionlabReports = { exposure: exposureReport, attention: attentionReport };
}
document.body.dataset.participantScript = "ready";
