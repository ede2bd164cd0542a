"""A superuser creates a study in the Django admin, starting from the default grade scale."""

import pytest

from studies.models import Study

pytestmark = pytest.mark.django_db


def test_the_add_form_offers_the_default_scale(admin_client):
    html = admin_client.get("/admin/studies/study/add/").content.decode()
    for label in ("not relevant", "marginally relevant", "fairly relevant", "highly relevant"):
        assert f'value="{label}"' in html


def test_a_study_saved_in_the_admin_keeps_its_scale_and_owner(admin_client, admin_user):
    data = {
        "name": "Admin study",
        "slug": "admin-study",
        "owner": admin_user.pk,
        "consent_version": "1",
        "questionnaire": "[]",
        "post_task_questionnaire": "[]",
        "grade_levels-TOTAL_FORMS": "2",
        "grade_levels-INITIAL_FORMS": "0",
        "grade_levels-0-value": "0",
        "grade_levels-0-label": "no",
        "grade_levels-1-value": "1",
        "grade_levels-1-label": "yes",
        "scenarios-TOTAL_FORMS": "1",
        "scenarios-INITIAL_FORMS": "0",
        "scenarios-0-code": "S1",
        "scenarios-0-title": "T",
        "scenarios-0-text": "Read",
        "scenarios-0-topic_id": "1",
        "systems-TOTAL_FORMS": "1",
        "systems-INITIAL_FORMS": "0",
        "systems-0-code": "A",
        "systems-0-name": "A",
        "systems-0-backend": "builtin",
        "systems-0-config": "{}",
    }
    response = admin_client.post("/admin/studies/study/add/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    study = Study.objects.get(slug="admin-study")
    assert study.grade_values() == [0, 1]
    assert study.scenarios.count() == 1 and study.systems.count() == 1
    assert admin_user in study.researchers.all()
