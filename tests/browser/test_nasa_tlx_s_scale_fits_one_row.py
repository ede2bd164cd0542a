"""NASA-TLX's 0-20 scale sits on one row at 1280 x 800 (its 21 steps and both anchors), and still wraps
rather than overflowing on a phone's width."""

import pytest

from studies.models import Study
from studies.questionnaires.instruments import NASA_TLX

pytestmark = pytest.mark.django_db(transaction=True)

ROW_TOPS = """(name) => Array.from(document.querySelectorAll(`fieldset[data-item=${name}] .options > *`))
    .map(el => Math.round(el.getBoundingClientRect().top + el.getBoundingClientRect().height / 2))"""


def _tlx_page(chromium, live_server, token, viewport):
    study = Study.objects.get(participants__access_token=token)
    study.questionnaire = [dict(item) for item in NASA_TLX.items]
    study.save(update_fields=["questionnaire"])
    page = chromium.new_page(viewport=viewport)
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/p/{token}/")
    page.click("#consent-accept")
    page.wait_for_selector("fieldset[data-item=tlx_mental] .options")
    return page


def test_the_tlx_scale_is_one_row_at_1280_wide(chromium, live_server, token):
    page = _tlx_page(chromium, live_server, token, {"width": 1280, "height": 800})
    centres = page.evaluate(ROW_TOPS, "tlx_mental")
    assert len(centres) == 23  # 21 steps and the two anchors
    assert max(centres) - min(centres) <= 12, centres  # one row: every centre on one line
    page.close()


def test_the_tlx_scale_wraps_inside_a_phone_s_width(chromium, live_server, token):
    page = _tlx_page(chromium, live_server, token, {"width": 390, "height": 844})
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, overflow
    page.close()
