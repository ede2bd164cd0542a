"""The participant's way: their forms (consent, questionnaires, checks, gold answers, a session's start, each
through the one idempotent step, form_step.py), the search steps as batches of one, withdrawal, and where a
participant is."""
