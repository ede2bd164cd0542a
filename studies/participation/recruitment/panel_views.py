"""The panel's side of a study (docs/recruitment.md): the public link that creates a participant on first
visit (and resumes them only with proof: recruitment/resume.py), the resume code's form, and the endpoint
for the panel's status notifications. Thin: check, call recruitment's services, answer. Hostile input is
refused per item with a reason, never a 500.
"""

from __future__ import annotations

import hmac
import json
import re

from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from sessionlab.csp import policy_for
from studies.errors import RecruitmentError, Refused
from studies.models import Participant, Recruitment
from studies.participation.recruitment.join import participant_join, participant_of_panel_id
from studies.participation.recruitment.panel_status import PANEL_STATUS_NAMES, panel_status_record
from studies.participation.recruitment.panels import (
    PANEL_ID_TEXT,
    mturk_frame_ancestors,
    mturk_preview,
    mturk_tab_query,
    panel_id_canonical,
    panel_ids_from_query,
)
from studies.participation.recruitment.resume import (
    RESUME_COOKIE_SECONDS,
    resume_code_matches,
    resume_cookie_name,
    resume_cookie_proves,
    resume_cookie_value,
    resume_tries_left,
)

_PUBLIC_TOKEN = re.compile(r"[A-Za-z0-9_-]{10,40}")
MAX_STATUS_BYTES = 1_000_000
MAX_NOTIFICATIONS = 500


def _recruitment_or_404(public_token: str) -> Recruitment:
    found = None
    if _PUBLIC_TOKEN.fullmatch(public_token):
        found = Recruitment.objects.select_related("study").filter(public_token=public_token).first()
    if found is None:
        raise Http404("No such study link.")
    return found


def _join_refused(request, study, refusal: Refused, status: int):
    return render(
        request, "participate/join_refused.html", {"study": study, "message": refusal.message}, status=status
    )


# Sec-Fetch-Dest of a page loaded in a frame (sent by Chromium, Firefox and Safari since 16.4).
_FRAMES = ("iframe", "frame")


def _mturk_landing(request, template: str, context: dict):
    """The one page that may be framed, and only by MTurk's hosts (settings.MTURK_FRAME_ANCESTORS): its
    frame-ancestors name them and X-Frame-Options is left off (docs/security.md, "the one framing
    exception")."""
    response = render(request, template, context)
    response["Content-Security-Policy"] = policy_for(request.path, frame_ancestors=mturk_frame_ancestors())
    response.xframe_options_exempt = True
    return response


# A later arrival with a known panel id resumes only with proof (recruitment/resume.py): the signed cookie the
# first arrival's response set on the link's own path, or the resume code shown on the participant's pages.
RESUME_REFUSED = (
    "This id has already started this study. Open the study's link in the browser you started in, or "
    "contact the researcher, who can send you your own link again."
)
MAX_RESUME_CODE_CHARS = 40


def _resume_page(request, found: Recruitment, panel_id: str, status: int, error: str = ""):
    """The refusal of a known id without proof: the message, and a form for the resume code. No token."""
    context = {"study": found.study, "message": RESUME_REFUSED, "panel_id": panel_id, "error": error}
    context["public_token"] = found.public_token
    return render(request, "participate/join_resume.html", context, status=status)


def _resumed(request, found: Recruitment, participant: Participant):
    """Sent on to their private link, with this browser now holding the resume cookie."""
    response = redirect("participate:home", token=participant.access_token)
    response.set_cookie(
        resume_cookie_name(found.pk),
        resume_cookie_value(participant),
        max_age=RESUME_COOKIE_SECONDS,
        path=reverse("panel:join", kwargs={"public_token": found.public_token}),
        secure=request.is_secure(),
        httponly=True,
        samesite="Lax",
    )
    return response


@never_cache
@require_GET  # not HEAD: a link preview must not create a participant
def join(request, public_token):
    """The public link: the participant with the panel id in the URL (made on first visit), sent on to their
    own private link. The same panel id always gets the same participant back."""
    found = _recruitment_or_404(public_token)
    study = found.study
    if mturk_preview(found.panel, request.GET):  # the HIT's preview: the study, and nobody made
        return _mturk_landing(request, "participate/join_preview.html", {"study": study})
    try:
        ids = panel_ids_from_query(found.panel, request.GET)
    except Refused as refusal:  # the panel's ids missing or malformed, MTurk's turkSubmitTo not MTurk's
        return _join_refused(request, study, refusal, 400)
    if found.panel == "mturk" and request.headers.get("Sec-Fetch-Dest") in _FRAMES:
        # The accepted HIT inside MTurk's frame: a cross-site frame's cookies (session, CSRF) are unreliable,
        # so the study runs in a tab of its own, opened by a link to this same URL; nobody is made here.
        open_url = f"{request.path}?{mturk_tab_query(request.GET)}"
        return _mturk_landing(
            request, "participate/join_mturk_frame.html", {"study": study, "open_url": open_url}
        )
    try:
        joined = participant_join(study=study, ids=ids)
    except Refused as refusal:  # the link is closed, the study full or not ready
        return _join_refused(request, study, refusal, 409)
    cookie = request.COOKIES.get(resume_cookie_name(found.pk), "")
    if not joined.created and not resume_cookie_proves(cookie, joined.participant):
        # A known panel id alone is no proof: ids can be sequential, and MTurk's are known to other
        # requesters. Their private link is never handed out here (docs/recruitment.md, "Coming back").
        return _resume_page(request, found, joined.participant.panel_id, 409)
    return _resumed(request, found, joined.participant)


@never_cache
@require_POST
def resume(request, public_token):
    """The resume code typed on the refusal page: right, this browser gets the resume cookie and goes on to
    the participant's private link; wrong (or an id nobody has), the same page again, 403, and no token."""
    found = _recruitment_or_404(public_token)
    panel_id = request.POST.get("panel_id", "")
    typed = request.POST.get("code", "")
    if not PANEL_ID_TEXT.fullmatch(panel_id):
        return _join_refused(request, found.study, Refused("panel_id: not a panel id we know."), 400)
    participant = participant_of_panel_id(study=found.study, panel_id=panel_id)
    if participant is None:
        return _resume_page(request, found, panel_id, 403, "code: this code does not match this id.")
    if not resume_tries_left(participant):
        return _resume_page(
            request, found, panel_id, 429, "code: too many wrong codes for this id; try again in an hour."
        )
    if len(typed) > MAX_RESUME_CODE_CHARS or not resume_code_matches(participant, typed):
        return _resume_page(request, found, panel_id, 403, "code: this code does not match this id.")
    return _resumed(request, found, participant)


def _panel_of(study) -> str:
    return Recruitment.objects.filter(study=study).values_list("panel", flat=True).first() or "generic"


def _one_notification(study, item) -> dict:
    if not isinstance(item, dict):
        return {"ok": False, "error": "a notification is an object"}
    panel_id, status, key, sent = (
        item.get("participant_id"),
        item.get("status"),
        item.get("id"),
        item.get("time"),
    )
    if not isinstance(panel_id, str) or not PANEL_ID_TEXT.fullmatch(panel_id):
        return {"ok": False, "error": "participant_id: 1..64 letters, digits or _.:-"}
    if not isinstance(status, str) or PANEL_STATUS_NAMES.get(status.strip().lower()) is None:
        return {"ok": False, "error": "status: one of returned, timed_out, approved, rejected"}
    sent_at = None
    if sent is not None:
        try:
            sent_at = parse_datetime(sent) if isinstance(sent, str) and len(sent) <= 40 else None
        except ValueError:
            sent_at = None
        if sent_at is None or sent_at.tzinfo is None:
            return {"ok": False, "error": "time: an ISO 8601 date and time with its offset"}
    if key is None:  # the id folded as the panel writes it: another letter case is the same notification
        folded = panel_id_canonical(_panel_of(study), panel_id)
        key = f"{folded}:{status.strip().lower()}:{sent or ''}"
    if not isinstance(key, str) or not 1 <= len(key) <= 200 or "\x00" in key:
        return {"ok": False, "error": "id: 1..200 characters"}
    try:
        outcome = panel_status_record(
            study=study, key=f"endpoint:{key}", panel_id=panel_id, status=status, sent_at=sent_at
        )
    except RecruitmentError as error:
        return {"ok": False, "error": str(error)}
    return {"ok": True, **outcome}


@csrf_exempt  # the panel's server calls it; the study's secret authenticates it
@require_POST
def panel_status(request, public_token):
    """The panel's status notifications: JSON {"notifications": [{"id", "participant_id", "status", "time"}]}
    (or one such object), with the study's secret in X-SessionLab-Secret. One result per notification; a
    replay answers what the first one did."""
    found = _recruitment_or_404(public_token)
    secret = request.headers.get("X-SessionLab-Secret", "")
    if not hmac.compare_digest(secret.encode("utf-8", "surrogatepass"), found.status_secret.encode()):
        return JsonResponse({"error": "wrong or missing X-SessionLab-Secret"}, status=403)
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > MAX_STATUS_BYTES:
        return JsonResponse({"error": "body too large"}, status=413)
    try:
        body = json.loads(request.body)
    except ValueError as error:
        return JsonResponse({"error": f"not JSON: {str(error)[:200]}"}, status=400)
    except RecursionError:
        return JsonResponse({"error": "not JSON we can read: nested too deeply"}, status=400)
    items = body.get("notifications", [body]) if isinstance(body, dict) else None
    if not isinstance(items, list):
        return JsonResponse({"error": 'expected {"notifications": [...]} or one notification'}, status=400)
    if len(items) > MAX_NOTIFICATIONS:
        return JsonResponse({"error": f"at most {MAX_NOTIFICATIONS} notifications at once"}, status=413)
    return JsonResponse({"results": [_one_notification(found.study, item) for item in items]})
