"""Every page carries a Content-Security-Policy of our own origin only (no inline script anywhere), and the
pages still work under it: Chromium reports no violation on the participant's pages (searching, opening a
document), the study page, the dashboards (every chart drawn), the API docs (Swagger UI and ReDoc rendered),
the assessment pages and the login page."""

import pytest
from django.test import Client
from django.urls import reverse

from scoring import services as scoring_services
from scoring.dashboards.registry import drawn_charts
from studies.design import services
from studies.models import Document
from studies.participation.way.form_steps import consent_record, questionnaire_save, session_start
from studies.search.systems import collection_index_build
from tests.dashboards.conftest import build_study, collection_docs  # noqa: F401 (a fixture)

from .csp import csp_listen, csp_violations

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def scored_study(settings, tmp_path, designed_study, collection_docs):  # noqa: F811
    """The dashboards' constructed study, scored, with its collection indexed and one participant more who
    has consented and answered, in the search of their first scenario; and one who has just arrived."""
    settings.INDEX_ROOT = tmp_path / "indexes"
    build_study(designed_study, collection_docs, participants=4)
    Document.objects.filter(collection=designed_study.collection).update(text="A report on wings and flow.")
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=designed_study.collection, configuration=configuration)
    run = scoring_services.scoring_run_create(study=designed_study)  # eager: done at once
    run.refresh_from_db()
    assert run.status == "done", run.error
    searching, arriving = services.participants_enrol(study=designed_study, count=2)
    consent_record(participant=searching, consent_version="1", client_event_id="c1")
    questionnaire_save(
        participant=searching,
        client_event_id="c2",
        answers={"search_engine_years": 3, "domain_years": 2, "search_skill": 4},
    )
    session_start(
        participant=searching, client_event_id="c3", assignment=searching.assignments.get(position=1)
    )
    return designed_study, run, searching, arriving


def _visit(context, url, ready=None):
    page = context.new_page()
    page.set_default_timeout(30_000)
    reports = csp_listen(page)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    response = page.goto(url)
    assert response.status == 200, url
    policy = response.headers.get("content-security-policy", "")
    assert "default-src 'self'" in policy and "script-src 'self';" in policy, (url, policy)
    if ready:
        ready(page)
    page.wait_for_timeout(300)  # late reports (a style a library adds after its first paint)
    return page, csp_violations(page, reports), errors


def _context(chromium, live_server, user):
    client = Client()  # one each: logging a second user in on the same client would end the first's session
    client.force_login(user)
    context = chromium.new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    return context


def test_no_page_reports_a_violation(chromium, live_server, scored_study, django_user_model):
    study, run, searching, arriving = scored_study
    researcher = _context(chromium, live_server, study.owner)
    admin = _context(
        chromium, live_server, django_user_model.objects.create_superuser("root", password="root-password")
    )
    anonymous = chromium.new_context()

    def search(page):
        page.fill("input[name=q]", "wings")
        page.keyboard.press("Enter")
        page.click("#results .result-title >> nth=0")
        page.wait_for_selector("#document-view:not([hidden])")
        page.keyboard.press("2")  # a judgment
        page.wait_for_selector("#results .judged:not(:empty)")

    def charts(page):
        page.locator(".js-plotly-plot").nth(len(drawn_charts(2)) - 1).wait_for()
        page.locator(".modebar-btn").first.wait_for()

    pages = [
        (anonymous, f"/p/{searching.access_token}/", search),
        (
            anonymous,
            f"/p/{arriving.access_token}/",
            lambda page: page.wait_for_selector("form[data-event-form]"),
        ),
        (anonymous, reverse("login"), None),
        (researcher, reverse("studies:study_list"), None),
        (researcher, reverse("studies:study_detail", args=[study.slug]), None),
        (researcher, reverse("scoring:runs", args=[study.slug]), None),
        (researcher, reverse("scoring:run_detail", args=[study.slug, run.pk]), charts),
        (researcher, reverse("scoring:compare", args=[study.slug]) + f"?a={run.pk}&b={run.pk}", None),
        (researcher, reverse("assessment:manage", args=[study.slug]), None),
        (anonymous, reverse("api-docs"), lambda page: page.wait_for_selector(".swagger-ui .opblock")),
        (anonymous, reverse("api-redoc"), lambda page: page.wait_for_selector("[role=menuitem]")),
        (admin, reverse("admin:index"), None),
        (admin, reverse("admin:studies_study_change", args=[study.pk]), None),
    ]
    found = {}
    for who, path, ready in pages:
        page, violations, errors = _visit(who, live_server.url + path, ready)
        if violations or errors:
            found[path] = (violations, errors)
        page.close()
    assert found == {}
    for context in (researcher, admin, anonymous):
        context.close()


def test_every_answer_carries_the_header(client, scored_study):
    study, run, searching, _ = scored_study
    client.force_login(study.owner)
    for path in [
        "/",
        reverse("login"),
        f"/p/{searching.access_token}/",
        "/p/no-such-token/",
        reverse("studies:study_detail", args=[study.slug]),
        reverse("api-schema"),
        "/api/studies/",
        reverse("scoring:chart_json", args=[study.slug, run.pk, "curves"]),
        "/static/js/participant.js",
        "/no/such/page/",
    ]:
        policy = client.get(path)["Content-Security-Policy"]
        assert policy.startswith("default-src 'self'; script-src 'self'; style-src 'self'"), path
        assert "'unsafe-inline'" not in policy.split("style-src")[0]  # never for scripts
    assert "style-src 'self';" in client.get(f"/p/{searching.access_token}/")["Content-Security-Policy"]
