"""The one flag function (studies/participation/recruitment/effort_flags.py, no Django, no database): no
queries, a speeder's duration, machine-regular timing, time the server never saw, and each shortfall against
the study's minimum-effort rules; an honest task raises none."""

from studies.participation.recruitment.effort_flags import (
    EFFORT_PRESETS,
    NO_RULES,
    REGULAR_MAX_CV,
    REGULAR_MIN_GAPS,
    SPEEDER_SECONDS,
    UNSEEN_SLACK_SECONDS,
    EffortRules,
    SessionEffort,
    below_rules,
    effort_flags,
    gaps_variation,
)

# A person: pauses of different lengths between their actions.
HUMAN_TIMES = (0.0, 4.2, 11.9, 13.0, 31.5, 40.1, 58.7, 75.0, 90.3)


def task(position=1, queries=3, judgments=4, active=150.0, times=HUMAN_TIMES, span=150.0):
    return SessionEffort(position, queries, judgments, active, tuple(times), span)


def codes(flags):
    return [(f.code, f.position) for f in flags]


def test_an_honest_task_raises_no_flag_under_any_preset():
    for rules in EFFORT_PRESETS.values():
        assert effort_flags([task()], rules) == []


def test_a_task_without_queries_is_flagged():
    assert codes(effort_flags([task(queries=0)])) == [("no_queries", 1)]


def test_a_task_shorter_than_the_speeder_threshold_is_flagged_and_one_just_over_is_not():
    flags = effort_flags([task(active=SPEEDER_SECONDS - 0.5)])
    assert codes(flags) == [("speeder", 1)] and "19.5 s" in flags[0].reason
    assert effort_flags([task(active=SPEEDER_SECONDS)]) == []


def test_an_open_task_is_no_speeder():
    assert effort_flags([task(active=None)]) == []


def test_evenly_spaced_events_are_machine_regular():
    loop = [2.0 * n for n in range(REGULAR_MIN_GAPS + 1)]  # a fixed sleep of two seconds
    flags = effort_flags([task(times=loop)])
    assert codes(flags) == [("machine_regular", 1)]
    assert f"{REGULAR_MIN_GAPS} gaps" in flags[0].reason


def test_events_at_one_instant_are_machine_regular():
    burst = [5.0] * (REGULAR_MIN_GAPS + 1)
    assert gaps_variation(burst) == (REGULAR_MIN_GAPS, 0.0)
    assert codes(effort_flags([task(times=burst)])) == [("machine_regular", 1)]


def test_too_few_gaps_say_nothing_about_regularity():
    few = [2.0 * n for n in range(REGULAR_MIN_GAPS)]  # one gap short
    assert effort_flags([task(times=few)]) == []
    assert gaps_variation([1.0]) == (0, None)


def test_the_variation_threshold_is_strict():
    count, variation = gaps_variation(HUMAN_TIMES)
    assert count == len(HUMAN_TIMES) - 1 and variation is not None and variation > REGULAR_MAX_CV


def test_time_the_server_never_saw_is_flagged():
    claimed = task(active=300.0, span=1.0)
    flags = effort_flags([claimed])
    assert codes(flags) == [("unseen_time", 1)] and "300 s claimed" in flags[0].reason
    # A slow network or a short batch delay is not: within the slack.
    assert effort_flags([task(active=95.0, span=95.0 - UNSEEN_SLACK_SECONDS + 1)]) == []


def test_each_shortfall_against_the_rules_is_named_per_task():
    rules = EffortRules(min_queries=2, min_judgments=3, min_active_seconds=120)
    tasks = [task(1, active=95.0, span=95.0), task(2, queries=1, judgments=0, active=40.0, span=40.0)]
    flags = effort_flags(tasks, rules)
    short = below_rules(flags)
    assert codes(short) == [("below_rules", 1), ("below_rules", 2)]
    assert short[0].reason == "95 s active < 120 s"
    assert short[1].reason == "1 query < 2; 0 judgments < 3; 40 s active < 120 s"
    assert short[1].text().startswith("task 2: ")


def test_no_rules_ask_nothing_and_the_presets_grow_stricter():
    assert not NO_RULES.asks_anything() and EFFORT_PRESETS["none"] == NO_RULES
    light, standard, strict = (EFFORT_PRESETS[n] for n in ("light", "standard", "strict"))
    for looser, stricter in ((light, standard), (standard, strict)):
        assert stricter.min_queries >= looser.min_queries
        assert stricter.min_judgments >= looser.min_judgments
        assert stricter.min_active_seconds > looser.min_active_seconds


def test_a_scripted_task_raises_every_flag_it_earns():
    script = SessionEffort(1, 0, 0, 0.2, (0.0, 0.05, 0.1, 0.15, 0.2, 0.25), 0.2)
    flags = effort_flags([script], EFFORT_PRESETS["standard"])
    assert [f.code for f in flags] == ["no_queries", "speeder", "machine_regular", "below_rules"]
