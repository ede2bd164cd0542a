"""The behaviour figures of a Session Track log (scoring/lib/session_log_stats.py), on a log small enough to
count by hand: two sessions, four queries, four clicks."""

import pytest

from scoring.lib.session_log_stats import LoggedQuery, LoggedSession, behaviour_statistics, reformulation_kind
from studies.interchange.session_track.behaviour import logged_sessions
from studies.interchange.session_track.reader import read_log


def _result(rank, doc, title, snippet=""):
    return (
        f'<result rank="{rank}"><url>http://{doc}</url><clueweb09id>{doc}</clueweb09id>'
        f"<title>{title}</title><snippet>{snippet}</snippet></result>"
    )


def _click(num, start, end, rank):
    return f'<click num="{num}" starttime="{start}" endtime="{end}"><rank>{rank}</rank></click>'


LOG = f"""<sessiontrack2012>
 <session num="1" starttime="10:00:00.000000">
  <topic num="7"><desc>Solar power at home.</desc></topic>
  <interaction num="1" starttime="10:00:05.000000">
   <query>solar panels</query>
   <results>{_result(1, "d-a", "Solar panel cost", "the efficiency of panels")}{_result(2, "d-b", "Roofs")}\
{_result(3, "d-c", "Inverters")}</results>
   <clicked>{_click(1, "10:00:10.000000", "10:00:40.000000", 3)}\
{_click(2, "10:00:45.000000", "10:00:55.000000", 1)}</clicked>
  </interaction>
  <interaction num="2" starttime="10:01:00.000000">
   <query>solar panels efficiency</query>
   <results>{_result(1, "d-d", "Ratings")}{_result(2, "d-e", "Tables")}</results>
  </interaction>
  <interaction num="3" starttime="10:02:00.000000">
   <query>wind turbines</query>
   <results>{_result(1, "d-f", "Turbines")}</results>
   <clicked>{_click(1, "10:02:10.000000", "10:02:30.000000", 1)}</clicked>
  </interaction>
  <currentquery starttime="10:03:00.000000"><query>home wind power</query></currentquery>
 </session>
 <session num="2" starttime="11:00:00.000000">
  <topic num="8"><desc>Cheap flights.</desc></topic>
  <interaction num="1" starttime="11:00:05.000000">
   <query>cheap flights</query>
   <results>{_result(1, "d-g", "Fares")}{_result(2, "d-h", "Airlines")}</results>
   <clicked>{_click(1, "11:00:10.000000", "11:00:15.000000", 2)}</clicked>
  </interaction>
  <currentquery starttime="11:01:00.000000"><query>cheap flights europe</query></currentquery>
 </session>
</sessiontrack2012>
"""


@pytest.fixture
def figures():
    return behaviour_statistics(logged_sessions(read_log(LOG.encode(), "small.xml")))


def test_queries_per_session_count_the_queries_with_results_not_the_current_query(figures):
    queries = figures["queries_per_session"]
    assert (queries["n"], queries["mean"], queries["q50"]) == (2, 2.0, 2.0)
    assert (queries["q25"], queries["q75"], queries["q90"]) == pytest.approx((1.5, 2.5, 2.8))


def test_clicks_per_query_count_queries_without_a_click(figures):
    clicks = figures["clicks_per_query"]
    assert (clicks["n"], clicks["mean"]) == (4, 1.0)  # 2, 0, 1, 1
    assert figures["share_no_click"] == {"n": 4, "mean": 0.25}


def test_click_ranks_and_the_deepest_click_of_each_query(figures):
    assert (figures["click_rank"]["n"], figures["click_rank"]["mean"]) == (4, 1.75)  # 3, 1, 1, 2
    deepest = figures["deepest_click"]
    assert (deepest["n"], deepest["mean"], deepest["q50"]) == (3, 2.0, 2.0)  # 3, 1, 2


def test_dwell_is_a_click_s_end_minus_its_start(figures):
    dwell = figures["dwell_seconds"]
    assert (dwell["n"], dwell["mean"]) == (4, pytest.approx(16.25))  # 30, 10, 20, 5


def test_reformulations_and_terms_learned_from_the_results_shown(figures):
    assert figures["reformulation"] == {"n": 2, "same": 0.0, "add": 0.5, "drop": 0.0, "swap": 0.0, "new": 0.5}
    # "efficiency" was in a snippet shown before it was added; "wind" and "turbines" were not.
    assert figures["learned_terms"] == {"n": 3, "mean": pytest.approx(1 / 3)}
    assert figures["query_terms"]["mean"] == pytest.approx(9 / 4)
    assert figures["first_query_terms"]["mean"] == 2.0


def test_each_kind_of_reformulation_is_named():
    assert reformulation_kind(["a", "b"], ["a", "b"]) == "same"
    assert reformulation_kind(["a", "b"], ["a", "b", "c"]) == "add"
    assert reformulation_kind(["a", "b"], ["a"]) == "drop"
    assert reformulation_kind(["a", "b"], ["a", "c"]) == "swap"
    assert reformulation_kind(["a", "b"], ["c"]) == "new"


def test_a_session_without_queries_counts_for_nothing():
    empty = behaviour_statistics([LoggedSession("1", ()), LoggedSession("2", (LoggedQuery("x", ("d",)),))])
    assert empty["queries_per_session"]["n"] == 1
    assert empty["deepest_click"] == {
        "n": 0,
        "mean": None,
        "sd": None,
        "q25": None,
        "q50": None,
        "q75": None,
        "q90": None,
    }
