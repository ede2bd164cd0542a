"""The two instrument scores, without a database (scoring/lib/instrument_scores.py)."""

import pytest

from scoring.lib.instrument_scores import sus_score, tlx_rating, tlx_raw

# Brooke (1996), the scored sample form: the score contributions 4, 1, 1, 4, 1, 2, 1, 1, 4, 3 (total 22, SUS
# 22 x 2.5 = 55); as responses, odd items (contribution + 1) and even items (5 - contribution).
BROOKE_CONTRIBUTIONS = [4, 1, 1, 4, 1, 2, 1, 1, 4, 3]
BROOKE_RESPONSES = [c + 1 if n % 2 else 5 - c for n, c in enumerate(BROOKE_CONTRIBUTIONS, start=1)]


def test_brooke_s_sample_form_scores_55():
    assert BROOKE_RESPONSES == [5, 4, 2, 1, 2, 3, 2, 4, 5, 2]
    assert sus_score(BROOKE_RESPONSES) == 55.0


def test_sus_spans_0_to_100():
    assert sus_score([5, 1] * 5) == 100.0  # agree with every positive item, disagree with every negative one
    assert sus_score([1, 5] * 5) == 0.0
    assert sus_score([3] * 10) == 50.0


@pytest.mark.parametrize(
    "responses", [[3] * 9, [3] * 9 + [None], [3] * 9 + [6], [3] * 9 + [0], [3] * 9 + ["3"]]
)
def test_a_missing_or_impossible_sus_response_has_no_score(responses):
    assert sus_score(responses) is None


def test_raw_tlx_is_the_mean_of_the_six_ratings():
    # Hart (2006): the raw TLX drops the pairwise weights and averages the six 0-100 ratings.
    assert tlx_raw([70, 20, 55, 30, 65, 40]) == pytest.approx(280 / 6)
    assert tlx_raw([0] * 6) == 0.0 and tlx_raw([100] * 6) == 100.0


def test_a_mark_on_the_21_step_form_is_five_points_a_step():
    # Hart's reading of the paper form: count the marks, subtract 1, multiply by 5 (mark 5 reads 20).
    assert tlx_rating(4) == 20.0 and tlx_rating(20) == 100.0 and tlx_rating(0) == 0.0
    assert tlx_rating(3, low=1, high=7) == pytest.approx(100 / 3)
    assert tlx_raw([tlx_rating(s) for s in (14, 4, 11, 6, 13, 8)]) == pytest.approx(280 / 6)


def test_a_missing_or_impossible_tlx_rating_has_no_score():
    assert tlx_raw([50] * 5) is None
    assert tlx_raw([50] * 5 + [None]) is None
    assert tlx_raw([50] * 5 + [101]) is None
    assert tlx_rating(21) is None and tlx_rating(None) is None
