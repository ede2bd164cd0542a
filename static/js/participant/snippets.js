/* Snippets with the query's terms highlighted. The engine's own match offsets when the answer carries them
 * (result.highlights: [start, end] pairs in the snippet); otherwise the query's words, with their common
 * English endings (the engines stem). */
const OPERATORS = { and: 1, or: 1, not: 1 };

export function termPattern(text) {
  const stems = [];
  (String(text || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || []).forEach(function (word) {
    if (OPERATORS[word] || word.length < 2) { return; }
    let stem = word.length > 4 ? word.replace(/(ing|ed|es|s)$/, "") : word;
    stem = stem.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    if (stems.indexOf(stem) < 0) { stems.push(stem); }
  });
  if (!stems.length) { return null; }
  stems.sort(function (a, b) { return b.length - a.length; });
  return new RegExp("(^|[^\\p{L}\\p{N}])((?:" + stems.join("|") +
                    ")(?:s|es|ed|ing|ings|er|ers|ion|ions|al|ly)?)(?![\\p{L}\\p{N}])", "giu");
}

export function termSpans(snippet, pattern) {
  const spans = [];
  let match;
  if (!pattern) { return spans; }
  pattern.lastIndex = 0;
  while ((match = pattern.exec(snippet)) !== null) {
    const start = match.index + match[1].length;
    spans.push([start, match.index + match[0].length]);
    if (match[0].length === 0) { pattern.lastIndex += 1; }
  }
  return spans;
}

export function fillSnippet(element, snippet, spans) {
  let at = 0;
  snippet = snippet || "";
  spans.slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (span) {
    const start = Math.max(at, span[0] | 0), end = Math.min(snippet.length, span[1] | 0);
    if (end <= start) { return; }
    element.appendChild(document.createTextNode(snippet.slice(at, start)));
    const mark = document.createElement("mark");
    mark.textContent = snippet.slice(start, end);
    element.appendChild(mark);
    at = end;
  });
  element.appendChild(document.createTextNode(snippet.slice(at)));
}
