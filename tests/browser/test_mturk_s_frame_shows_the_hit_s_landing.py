"""MTurk's page frames the HIT (ExternalQuestion): the landing renders inside a frame on an allowed origin, a
page on any other origin cannot frame it, and its "Open the study in a new tab" link runs the study in a tab
of its own, where the worker's cookies are first-party (consent, a POST with its CSRF cookie, goes through).

MTurk's hosts are https and the live server is plain http on localhost (an https page cannot frame it: mixed
content), so the stand-in MTurk page is served by a small server on another origin (127.0.0.1, its own port)
that this test alone adds to settings.MTURK_FRAME_ANCESTORS; a second one, not added, plays a hostile site."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from studies.models import AuditEntry, Participant, Recruitment

from .steps import ready

pytestmark = pytest.mark.django_db(transaction=True)

MTURK = ("https://www.mturk.com", "https://worker.mturk.com", "https://workersandbox.mturk.com")


def frame_page(landing: str) -> ThreadingHTTPServer:
    """A page on http://127.0.0.1:<port> that shows the landing in a frame, as MTurk's HIT page does."""
    body = (
        f'<!doctype html><title>HIT</title><iframe id="hit" src="{landing}" width="900" height="600">'
        "</iframe>"
    )

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def origin_of(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def landing_frame(page):
    page.wait_for_load_state("load")
    (frame,) = [frame for frame in page.frames if frame != page.main_frame]
    return frame


def test_the_landing_renders_in_mturk_s_frame_and_the_study_runs_in_its_own_tab(
    chromium, live_server, token, settings
):
    study = Participant.objects.get(access_token=token).study
    found = Recruitment.objects.create(study=study, panel="mturk")
    landing = (
        f"{live_server.url}/join/{found.public_token}/?workerId=A1WORKER&assignmentId=3ASSIGN&hitId=3HIT"
        "&turkSubmitTo=https://workersandbox.mturk.com"
    )
    mturk, hostile = frame_page(landing), frame_page(landing)
    settings.MTURK_FRAME_ANCESTORS = (*MTURK, origin_of(mturk))
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        # A hostile origin: Chromium refuses to render the landing in its frame (frame-ancestors).
        page.goto(f"{origin_of(hostile)}/hit")
        frame = landing_frame(page)
        page.wait_for_timeout(500)
        assert frame.query_selector("#join-mturk-frame") is None
        # MTurk's origin: the landing shows the study and the link; nobody is made yet.
        page.goto(f"{origin_of(mturk)}/hit")
        frame = landing_frame(page)
        frame.wait_for_selector("#join-mturk-frame")
        assert "Browser study" in frame.inner_text("h1")
        assert not Participant.objects.filter(study=study, panel_id="A1WORKER").exists()
        assert not AuditEntry.objects.filter(study=study, action="participant_joined").exists()
        link = frame.query_selector("#open-study")
        assert link.get_attribute("target") == "_blank" and link.get_attribute("rel") == "noopener"

        with context.expect_page() as opened:
            link.click()
        tab = opened.value
        tab.set_default_timeout(15_000)
        tab.wait_for_selector(ready("#consent-accept"))
        assert tab.url.startswith(f"{live_server.url}/p/")
        participant = Participant.objects.get(study=study, panel_id="A1WORKER")
        joined = AuditEntry.objects.get(study=study, action="participant_joined")
        assert joined.detail["turk_submit_to"] == "https://workersandbox.mturk.com"
        assert participant.panel_session_id == "3ASSIGN"
        tab.click("#consent-accept")  # a POST: the tab's CSRF cookie is first-party
        tab.wait_for_selector(ready("form#questionnaire"))
        # The MTurk tab still shows the landing (the worker comes back to it after submitting).
        assert frame.query_selector("#join-mturk-frame") is not None
    finally:
        context.close()
        mturk.shutdown()
        hostile.shutdown()
