"""Questionnaires: what an item may be (`items`), the standard instruments (`instruments`), a participant's
answers checked (`answers`) and shown a page at a time (`pages`), what may change once answered (`edits`),
and how many answers each item holds (`answered`). Below design and participation, which both ask it."""
