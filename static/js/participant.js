/* SessionLab participant pages, the entry point (loaded as <script type="module">: ES modules served as
 * they are, no build step). The modules under participant/, one concern each:
 *   outbox.js, acks.js, status.js, clock.js, storage.js  the event outbox: batched, acknowledged, retried
 *   forms.js                                              step forms posted once the outbox is empty
 *   search-page.js and the modules it wires               the search page
 * Nothing runs on a page without the client settings (config.js). A module runs once the page is parsed,
 * a moment after its elements appear: body[data-participant-script=ready] tells a waiting test (and a
 * curious reader of the DOM) that the page now answers. */
import { present } from "./participant/config.js";
import { holdUntilSaved, wireEventForms } from "./participant/forms.js";
import { exposeOutbox, flush, startOutbox } from "./participant/outbox.js";
import { startSearchPage } from "./participant/search-page.js";

if (present) {
  startOutbox();
  wireEventForms();
  holdUntilSaved();
  exposeOutbox();
  flush();
  startSearchPage();
}
document.body.dataset.participantScript = "ready";
