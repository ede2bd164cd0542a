"""A generative system's turns: each question a participant asked of it, what the model was given
and what it answered, kept whole (docs/generative-systems.md, "What is logged")."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from studies.models.core import Query, SearchSession


class GenerationPrompt(models.Model):
    """A prompt given to a model, kept once by its SHA-256: turns name it by hash."""

    sha256 = models.CharField(max_length=64, unique=True)
    text = models.TextField()

    def __str__(self):
        return self.sha256[:12]


class AnswerTurn(models.Model):
    class Status(models.TextChoices):
        OK = "ok", "Answered"
        FAILED = "failed", "Failed (the participant was asked to try again)"

    session = models.ForeignKey(SearchSession, on_delete=models.CASCADE, related_name="answer_turns")
    # The page's id for the turn: a question sent twice (a retry after a lost answer) is answered once.
    client_turn_id = models.CharField(max_length=64)
    asked_at = models.DateTimeField()
    question = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices)
    # What went wrong, a category only ("timed out", "HTTP 500", "answer too long"); the cause is in the log.
    error = models.CharField(max_length=200, blank=True)
    answer_text = models.TextField(blank=True)
    # [{"doc": id, "start": n|null, "end": n|null, "marker": "[1]"}], in the answer's order.
    citations = models.JSONField(default=list, blank=True)
    retrieved = models.JSONField(default=list, blank=True)  # document ids, in the retrieval's order
    # The exact passages given to the answerer: [{"doc": id, "title": ..., "text": ...}].
    passages = models.JSONField(default=list, blank=True)
    follow_ups = models.JSONField(default=list, blank=True)
    refused = models.JSONField(default=list, blank=True)  # items of the answer left out, each with why
    prompt = models.ForeignKey(GenerationPrompt, null=True, blank=True, on_delete=models.PROTECT)
    answerer = models.CharField(max_length=20)  # extractive | rag | service
    model_name = models.CharField(max_length=200, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    # The query event that showed it (its cited documents are that query's shown results, ranked 1..n).
    query = models.OneToOneField(
        Query, null=True, blank=True, on_delete=models.SET_NULL, related_name="answer_turn"
    )

    class Meta:
        ordering = ["session", "asked_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "client_turn_id"], name="answer_turn_client_id_unique"
            ),
            models.CheckConstraint(condition=Q(status__in=["ok", "failed"]), name="answer_turn_status_known"),
        ]

    def __str__(self):
        return f"turn {self.client_turn_id}: {self.question[:40]}"
