/* A judgment: shown at once on the open document and its result, sent with the outbox's next request; the
 * server's answer confirms it, or a refusal puts back the grade it holds. */
import { showChosen } from "./document-view.js";
import { enqueue } from "./outbox.js";
import { byId, gradeLabels, state } from "./search-state.js";

function showGrade(doc, grade) {
  state.grades[doc] = grade;
  if (state.openDoc && state.openDoc.doc === doc) {
    byId("judgment-status").textContent = "Your judgment: " + gradeLabels[grade];
    showChosen(grade);
  }
  Array.prototype.forEach.call(document.querySelectorAll(".result"), function (item) {
    if (item.dataset.doc === doc) { item.querySelector(".judged").textContent = gradeLabels[grade]; }
  });
}

function forgetGrade(doc) {
  delete state.grades[doc];
  if (state.openDoc && state.openDoc.doc === doc) { showChosen(undefined); }
  Array.prototype.forEach.call(document.querySelectorAll(".result"), function (item) {
    if (item.dataset.doc === doc) { item.querySelector(".judged").textContent = ""; }
  });
}

export function judge(grade) {
  const open = state.openDoc;
  if (!open || gradeLabels[grade] === undefined || state.finished) { return; }
  const doc = open.doc, previous = state.grades[doc];
  showGrade(doc, grade);  // at once; the server's answer confirms it (or says why not)
  // The query that showed it: should the judgment reach the server before that query, it waits for it.
  enqueue("judgment", { doc: doc, grade: grade, query_event: open.queryEvent }, function (ack) {
    if (ack.ok) { showGrade(ack.doc, ack.grade); return; }
    if (previous !== undefined) {
      showGrade(doc, previous);  // refused: the grade the server holds is still the earlier one
    } else {
      forgetGrade(doc);
    }
    if (state.openDoc && state.openDoc.doc === doc) {
      byId("judgment-status").textContent = ack.refused || ack.error;
    }
  }, true);
}
