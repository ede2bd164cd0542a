"""Query terms highlighted on the assessor's form (docs/assessing.md, "What an assessor sees").

Safe by construction: the text is split into words and the rest, every piece is escaped, and only whole words
that are terms are wrapped in <mark>, so neither the document's own markup nor an entity of the escaping
(the "amp" of &amp;) can be marked or run. Case-insensitive, whole words, no stemming."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# Words too common to help an assessor find what the topic is about.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then there
    these they this those through to too under until up very was we were what when where which while who whom
    why will with would you your""".split()
)
WORD = re.compile(r"(\w+)")


def highlight_terms(texts: Iterable[str]) -> frozenset[str]:
    """The lower-cased words of the texts (a topic's title, participants' queries), stopwords and single
    characters left out."""
    return frozenset(
        word
        for text in texts
        for word in WORD.findall(text.lower())
        if len(word) > 1 and word not in STOPWORDS
    )


def highlighted(text: str, terms: frozenset[str]) -> SafeString:
    """`text` escaped, its whole words that are `terms` (any case) in <mark>."""
    pieces = WORD.split(text)
    # re.split with a group alternates: the text between words (even places), a word (odd places).
    return mark_safe(
        "".join(
            f"<mark>{escape(piece)}</mark>" if place % 2 and piece.lower() in terms else escape(piece)
            for place, piece in enumerate(pieces)
        )
    )
