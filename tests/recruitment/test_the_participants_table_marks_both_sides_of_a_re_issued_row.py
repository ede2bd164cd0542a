"""The study page's participants table (and the progress fragment that refreshes it) marks both sides of a
re-issued plan row: the participant who left says whom their row went to, the one who took it says whose row
it was; a participant with a row of their own carries neither mark."""

import re

import pytest

from studies.design import services

from .conftest import join
from .test_researcher_enrolment_re_issues_freed_rows import free

pytestmark = pytest.mark.django_db


def row_of(page: str, code: str) -> str:
    """The participants table's row of `code` (its first cell holds the code)."""
    rows = re.findall(r'<tr class="state-[^"]*"><td>(.*?)</tr>', page, re.S)
    [row] = [row for row in rows if row.startswith(code)]
    return row


@pytest.mark.parametrize("ending", ["returned", "timed_out"])
def test_the_dropout_and_the_taker_each_name_the_other(client, panel_study, ending):
    gone = join(panel_study).participant
    free(panel_study, gone, ending)
    [taker] = services.participants_enrol(study=panel_study, count=1)
    assert taker.reissue_of_id == gone.pk
    [fresh] = services.participants_enrol(study=panel_study, count=1)
    client.force_login(panel_study.owner)
    for url in (f"/studies/{panel_study.slug}/", f"/studies/{panel_study.slug}/progress/"):
        page = client.get(url).content.decode()
        assert f"row re-issued to {taker.code}" in row_of(page, gone.code)
        assert "took over the row of" not in row_of(page, gone.code)
        assert f"took over the row of {gone.code}" in row_of(page, taker.code)
        assert "row re-issued to" not in row_of(page, taker.code)
        assert "re-issued" not in row_of(page, fresh.code) and "took over" not in row_of(page, fresh.code)
        assert page.count("row re-issued to") == page.count("took over the row of") == 1
