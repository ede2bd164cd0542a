"""The recruitment page's "next fresh row": it was always empty, its context key `counts`
overwritten by the status control's study counts. After two enrolled participants (rows 0 and 1) and one
arrival, the next fresh row is 3."""

import pytest

from .conftest import join

pytestmark = pytest.mark.django_db


def test_the_page_says_which_fresh_row_comes_next(client, panel_study):
    join(panel_study)
    client.force_login(panel_study.owner)
    page = client.get(f"/studies/{panel_study.slug}/recruitment/").content.decode()
    assert "next fresh row 3;" in page
    assert 'id="study-counts"' in page  # the status control's counts still shown beside it
