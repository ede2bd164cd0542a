"""Setting up an LLM assessor, changing it, starting and cancelling its runs leave AuditEntry rows, whether
the page or the API did it: the fields changed and "key replaced" or "key cleared", never a key; a change
that changes nothing leaves no row."""

from django.urls import reverse

from studies.models import AuditEntry

from .conftest import API_KEY


def entries(study, action):
    return list(
        AuditEntry.objects.filter(study=study, action=action).order_by("id").values_list("detail", flat=True)
    )


def test_setting_up_is_audited_with_the_model_and_host(api, pooled_study, model_server):
    body = {
        "endpoint_url": model_server.endpoint.replace("/v1", "/token-abc/v1"),
        "model_name": "m1",
        "api_key": API_KEY,
    }
    data = api.post(
        f"/api/studies/{pooled_study.pk}/llm-assessors/", body, content_type="application/json"
    ).json()
    assert entries(pooled_study, "llm_assessor_created") == [
        {
            "assessor": data["username"],
            "model": "m1",
            "endpoint_host": "127.0.0.1",
            "key": "key set",
            "by": "alice",
        }
    ]
    assert API_KEY not in str(AuditEntry.objects.values_list("detail", flat=True))


def test_a_change_names_its_fields_and_the_key_in_words(api, pooled_study, llm_assessor):
    url = f"/api/studies/{pooled_study.pk}/llm-assessors/{llm_assessor.pk}/"
    name = llm_assessor.membership.user.username
    api.patch(
        url, {"max_retries": 4, "temperature": 0.5, "api_key": "sk-other"}, content_type="application/json"
    )
    api.patch(url, {"max_retries": 4}, content_type="application/json")  # no change: no entry
    api.patch(url, {"api_key": ""}, content_type="application/json")
    api.patch(url, {"api_key": ""}, content_type="application/json")  # nothing left to clear: no entry
    assert entries(pooled_study, "llm_assessor_changed") == [
        {"assessor": name, "fields": ["max_retries", "temperature"], "key": "key replaced", "by": "alice"},
        {"assessor": name, "fields": [], "key": "key cleared", "by": "alice"},
    ]
    details = str(AuditEntry.objects.values_list("detail", flat=True))
    assert "sk-other" not in details and API_KEY not in details


def test_the_page_s_change_is_audited_too(client, alice, pooled_study, llm_assessor):
    from studies.assessment.llm.setup import EDITABLE

    client.force_login(alice)
    form = {name: getattr(llm_assessor, name) for name in EDITABLE}
    form = {name: "" if value is None else value for name, value in form.items()}
    form["model_name"] = "llama3.2:3b"
    page = client.post(reverse("assessment:llm_assessor", args=[pooled_study.slug, llm_assessor.pk]), form)
    assert page.status_code == 302
    [detail] = entries(pooled_study, "llm_assessor_changed")
    assert detail["fields"] == ["model_name"] and "key" not in detail


def test_starting_and_cancelling_a_run_are_audited(api, pooled_study, llm_assessor):
    name = llm_assessor.membership.user.username
    run = api.post(
        f"/api/studies/{pooled_study.pk}/llm-assessors/{llm_assessor.pk}/runs/",
        {"scenarios": ["S1"]},
        content_type="application/json",
    ).json()
    api.post(f"/api/studies/{pooled_study.pk}/llm-runs/{run['id']}/cancel/")
    api.post(f"/api/studies/{pooled_study.pk}/llm-runs/{run['id']}/cancel/")  # ended: no second entry
    assert entries(pooled_study, "llm_run_started") == [
        {"assessor": name, "run": run["id"], "scenarios": ["S1"], "by": "alice"}
    ]
    assert entries(pooled_study, "llm_run_cancelled") == [{"assessor": name, "run": run["id"], "by": "alice"}]


def test_the_entries_are_shown_in_the_admin(admin_client, api, pooled_study, llm_assessor):
    api.patch(
        f"/api/studies/{pooled_study.pk}/llm-assessors/{llm_assessor.pk}/",
        {"api_key": "sk-admin-must-not-see"},
        content_type="application/json",
    )
    page = admin_client.get(reverse("admin:studies_auditentry_changelist"))
    html = page.content.decode()
    assert page.status_code == 200 and "LLM assessor set up" in html and "settings changed" in html
    assert "sk-admin-must-not-see" not in html and API_KEY not in html
