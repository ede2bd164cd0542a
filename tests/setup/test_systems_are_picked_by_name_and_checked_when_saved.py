import pytest

from studies.design import services
from studies.models import Collection, Document, System


def add(client, study, **fields):
    data = {
        "system-code": "A",
        "system-name": "System A",
        "system-backend": "builtin",
        "system-configuration": "bm25_text",
        "system-url_template": "",
        "system-timeout": "5",
    }
    data.update({f"system-{k}": v for k, v in fields.items()})
    return client.post(f"/studies/{study.slug}/setup/systems/", data)


def test_a_built_in_system_is_chosen_by_name(alice_client, study):
    response = add(alice_client, study)
    assert response.status_code == 302
    system = study.systems.get()
    assert (system.backend, system.config) == ("builtin", {"configuration": "bm25_text"})
    page = alice_client.get(f"/studies/{study.slug}/setup/systems/").content.decode()
    assert "bm25_title_text: BM25 over title" in page  # the list shows each configuration with what it does


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"configuration": "bm99"}, "configuration", "Select a valid choice"),
        (
            {"backend": "http", "url_template": "ftp://engine/{bogus}"},
            "url_template",
            "unknown placeholder {bogus}",
        ),
        (
            {"backend": "http", "url_template": "ftp://engine/?q={query}"},
            "url_template",
            "not an http:// or https://",
        ),
        (
            {"backend": "http", "url_template": "https://engine/?q={query}", "timeout": "900"},
            "timeout",
            "less than or equal to 30",
        ),
        ({"backend": "http", "url_template": ""}, "url_template", "has no {query} placeholder"),
    ],
)
def test_a_system_that_cannot_work_is_refused_next_to_its_field(alice_client, study, fields, field, reason):
    response = add(alice_client, study, **fields)
    assert response.status_code == 400
    form = response.context["form"]
    assert reason in " ".join(form.errors[field]), form.errors
    assert not study.systems.exists()


def test_an_http_system_keeps_its_template_and_timeout(alice_client, study):
    add(
        alice_client,
        study,
        backend="http",
        url_template="https://engine.example/s?q={query}&p={page}",
        timeout="2.5",
    )
    assert study.systems.get().config == {
        "url_template": "https://engine.example/s?q={query}&p={page}",
        "timeout": 2.5,
    }


def test_a_system_is_edited_and_removed_before_the_first_enrolment(alice_client, study):
    add(alice_client, study)
    system = study.systems.get()
    page = alice_client.get(f"/studies/{study.slug}/setup/systems/{system.pk}/").content.decode()
    assert 'value="bm25_text" checked' in page or 'value="bm25_text" selected' in page
    alice_client.post(
        f"/studies/{study.slug}/setup/systems/{system.pk}/",
        {
            "system-code": "A",
            "system-name": "Renamed",
            "system-backend": "builtin",
            "system-configuration": "bm25_title_text",
        },
    )
    system.refresh_from_db()
    assert (system.name, system.config) == ("Renamed", {"configuration": "bm25_title_text"})
    alice_client.post(f"/studies/{study.slug}/setup/systems/{system.pk}/delete/")
    assert not study.systems.exists()


def test_after_the_first_enrolment_systems_stay_and_the_page_says_why(alice_client, designed_study):
    services.participants_enrol(study=designed_study, count=2)
    system = designed_study.systems.first()
    page = alice_client.post(
        f"/studies/{designed_study.slug}/setup/systems/{system.pk}/delete/", follow=True
    ).content.decode()
    assert "already has participants" in page and "Latin square" in page
    assert designed_study.systems.count() == 2
    response = add(alice_client, designed_study, code="C")
    assert response.status_code == 400 and "already has participants" in response.content.decode()


def test_testing_a_built_in_system_shows_its_answer_or_why_not(alice_client, study, settings):
    add(alice_client, study)
    system = study.systems.get()
    page = alice_client.post(
        f"/studies/{study.slug}/setup/systems/{system.pk}/test/", {"query": "wing"}
    ).content.decode()
    assert "the study has no collection" in page  # the cause, beside what a participant would read
    collection = Collection.objects.create(name="c", owner=study.owner)
    Document.objects.create(
        collection=collection, external_id="d1", title="Wing flutter", text="wing flutter"
    )
    study.collection = collection
    study.save(update_fields=["collection"])
    from studies.search.systems import collection_index_build

    collection_index_build(collection=collection, configuration="bm25_text")
    page = alice_client.post(
        f"/studies/{study.slug}/setup/systems/{system.pk}/test/", {"query": "wing"}
    ).content.decode()
    assert 'id="test-results"' in page and "Wing flutter" in page


def test_testing_an_http_system_shows_the_error(alice_client, study):
    system = services.system_add(
        study=study,
        code="H",
        name="Mine",
        backend=System.Backend.HTTP,
        config={"url_template": "http://127.0.0.1:9/?q={query}", "timeout": 1},
    )
    page = alice_client.post(
        f"/studies/{study.slug}/setup/systems/{system.pk}/test/", {"query": "wing"}
    ).content.decode()
    # Loopback is not allowed by default: the page says so, and nothing about the port (docs/security.md).
    assert 'id="test-error"' in page and "The cause: refused (address not allowed)" in page
    assert "127.0.0.1" not in page.split('id="test-error"')[1]


def test_a_built_in_system_without_a_configuration_searches_with_the_default(study):
    from studies.search.systems import DEFAULT_CONFIGURATION, system_configuration

    assert system_configuration({}) == DEFAULT_CONFIGURATION == "bm25_title_text"
