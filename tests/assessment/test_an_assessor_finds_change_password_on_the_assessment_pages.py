"""An assessor (no is_staff) finds "Change password" on the assessment pages, as the README and the
invitation say, and it leads to the form that changes it."""

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db


def test_the_assessment_pages_link_to_change_password_and_the_change_works(client):
    get_user_model().objects.create_user("ann", password="one-time-pass-1")
    client.login(username="ann", password="one-time-pass-1")
    home = client.get("/assess/").content.decode()
    assert 'id="password-change-link"' in home and 'href="/accounts/password/"' in home
    response = client.post(
        "/accounts/password/",
        {
            "old_password": "one-time-pass-1",
            "new_password1": "ann-chose-this-one",
            "new_password2": "ann-chose-this-one",
        },
        follow=True,
    )
    assert b'id="password-changed"' in response.content
    client.logout()
    assert client.login(username="ann", password="ann-chose-this-one")
