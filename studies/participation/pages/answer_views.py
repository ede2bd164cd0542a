"""The participant's question to a generative system (answer_turns.py): POST JSON {"session", "turn",
"question"} to /p/<token>/answer/ (fetch, CSRF header); the answer in JSON, a refusal (409) or a "try again"
(503, or 429 past the minute's questions)."""

from __future__ import annotations

import json

from django.http import Http404, JsonResponse
from django.views.decorators.http import require_POST

from studies.errors import Refused
from studies.kernel import tokens
from studies.participation.way.answer_turns import TryAgain, answer_turn_ask

BODY_MAX_BYTES = 16_384


@require_POST
def answer_submit(request, token):
    participant = tokens.participant_for_events(token)
    if participant is None:
        raise Http404("No such study link.")
    length = request.META.get("CONTENT_LENGTH") or ""
    if length.isdigit() and int(length) > BODY_MAX_BYTES:
        return JsonResponse({"error": f"at most {BODY_MAX_BYTES} bytes"}, status=413)
    try:
        body = json.loads(request.body)
    except (ValueError, RecursionError):
        return JsonResponse({"error": "not JSON"}, status=400)
    if not isinstance(body, dict):
        return JsonResponse({"error": 'expected {"session", "turn", "question"}'}, status=400)
    try:
        answer = answer_turn_ask(
            participant=participant,
            session_id=body.get("session"),
            client_turn_id=body.get("turn"),
            question=body.get("question"),
        )
    except Refused as refusal:
        return JsonResponse({"ok": False, "refused": refusal.message}, status=409)
    except TryAgain as again:
        return JsonResponse({"ok": False, "try_again": again.message}, status=again.status)
    return JsonResponse(answer)
