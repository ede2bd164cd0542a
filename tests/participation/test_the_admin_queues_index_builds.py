"""A researcher can build a collection's indexes from the
admin: one task per configuration, queued on commit."""

from studies.search.systems import collection_index_status
from studies.tasks import collection_index_build_task


def test_the_admin_action_builds_every_configuration(
    admin_client, small_collection, index_root, django_capture_on_commit_callbacks, monkeypatch
):
    # Run the queued tasks here even when a real broker is
    # configured (the worker cannot see this test's rows).
    monkeypatch.setattr(
        collection_index_build_task, "delay", lambda *args: collection_index_build_task.apply(args)
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = admin_client.post(
            "/admin/studies/collection/",
            {"action": "collection_indexes_build", "_selected_action": [small_collection.pk]},
        )
    assert response.status_code == 302 and len(callbacks) == 2
    assert collection_index_status(collection=small_collection) == {"bm25_title_text": 40, "bm25_text": 40}
