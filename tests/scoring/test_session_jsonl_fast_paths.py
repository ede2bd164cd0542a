"""The JSONL path of `python -m scoring session` is faster (orjson where installed, the garbage collector
paused while it builds records) and gives the same bytes: what is accepted, every value and error message, and
every output line are those of the standard library's json."""

import gc
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.lib import session_cli, session_io
from scoring.lib.errors import InputError
from scoring.lib.session import SessionParams

floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e-3, max_value=1e-3),  # around the 1e-4 where repr turns to exponents
    st.sampled_from([0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e-5, 1e15, 1e16, 1e22, 5e-324, 0.1, 121.0249]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(floats, min_size=1, max_size=12), min_size=1, max_size=6).filter(
        lambda rows: len({len(row) for row in rows}) == 1
    )
)
def test_float_rows_are_json_dumps_bytes(rows):
    matrix = np.asarray(rows, dtype=np.float64)
    assert session_cli.float_rows(matrix) == [json.dumps(row) for row in matrix.tolist()]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(floats, min_size=1, max_size=12), min_size=1, max_size=6))
def test_float_runs_are_json_dumps_bytes(runs):
    values = np.asarray([value for run in runs for value in run], dtype=np.float64)
    counts = np.asarray([len(run) for run in runs])
    assert session_cli.float_runs(values, counts) == [
        json.dumps(run) for run in np.split(values, np.cumsum(counts)[:-1]) for run in [run.tolist()]
    ]


def test_without_orjson_the_same_bytes(monkeypatch):
    matrix = np.asarray([[0.5, 1e-5, math.nan], [1.0, 2.0, 3.0]])
    fast = session_cli.float_rows(matrix), session_cli.float_runs(matrix.ravel(), np.asarray([2, 4]))
    monkeypatch.setattr(session_cli, "orjson", None)
    assert (
        session_cli.float_rows(matrix),
        session_cli.float_runs(matrix.ravel(), np.asarray([2, 4])),
    ) == fast


LINES = [
    '{"id": 1, "scenario": "T", "queries": [{"results": ["d1", "d2"], "text": "q", "scanned_to": 2}]}',
    # What orjson refuses or changes and json takes: NaN and 1E400 in a key nobody checks, a lone surrogate,
    # an integer beyond 64 bits as an id and as a participant.
    '{"id": 2, "scenario": "T", "note": NaN, "x": 1E400, "queries": [{"results": ["d1"]}]}',
    '{"id": 3, "scenario": "T", "queries": [{"results": ["d\\ud800"], "text": "\\udfff"}]}',
    '{"id": 18446744073709551616, "scenario": "T", "participant": -9223372036854775809, '
    '"queries": [{"results": ["d1"], "scanned_to": 99999999999999999999}]}',
    '{"id": "4", "scenario": 5, "system": "A", "queries": [{"results": []}]}',
]
BAD = [
    '{"id": 1, "scenario": "T", "queries": [{"results": ["d1", ""]}]}',
    '{"id": 1, "scenario": "T", "queries": [{"results": ["d1", 3]}]}',
    '{"id": 1, "scenario": "T", "queries": [{"results": ["d1", "d1"]}]}',
    '{"id": 1.5, "scenario": "T", "queries": [{"results": ["d1"]}]}',
    '{"id": 1, "scenario": "T", "queries": [{"results": ["d1"], "scanned_to": 1e400}]}',
    '{"id": 1, "scenario": "T", "queries": [{"results": ["d1"], "scanned_to": true}]}',
    '{"id": 1, "scenario": "T", "queries": [{"results": ["d1"]}],}',
    '{"id": 1, "scenario": NaN, "queries": [{"results": ["d1"]}]}',
    "[1, 2]",
    "{not json",
]


def parse_both(lines, monkeypatch):
    fast = session_io.parse_session_lines(lines, "log")
    with monkeypatch.context() as patch:
        patch.setattr(session_io, "_fast_loads", json.loads)
        return fast, session_io.parse_session_lines(lines, "log")


def test_records_are_those_of_the_standard_library(monkeypatch):
    fast, standard = parse_both(LINES, monkeypatch)
    assert fast == standard
    assert [record.id for record in fast] == [1, 2, 3, 18446744073709551616, "4"]
    assert fast[3].participant == -9223372036854775809 and fast[3].queries[0].scanned_to == 10**20 - 1
    assert fast[2].queries[0].results == ("d\ud800",)


@pytest.mark.parametrize("line", BAD)
def test_errors_are_those_of_the_standard_library(line, monkeypatch):
    messages = []
    for loads in (session_io._fast_loads, json.loads):
        monkeypatch.setattr(session_io, "_fast_loads", loads)
        with pytest.raises(InputError) as caught:
            session_io.parse_session_lines([LINES[0], line], "log")
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and messages[0].startswith("log:2: ")


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_left_as_it_was(enabled):
    (gc.enable if enabled else gc.disable)()
    try:
        session_io.parse_session_lines(LINES, "log")
        assert gc.isenabled() is enabled
        with pytest.raises(InputError):
            session_io.parse_session_lines(BAD, "log")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_the_cli_lines_are_the_bytes_json_dumps_writes(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    (tmp_path / "qrels").write_text(
        "".join(f"t{t} 0 d{d} {rng.integers(0, 4)}\n" for t in range(3) for d in range(30))
    )
    with open(tmp_path / "log.jsonl", "w") as handle:
        for number in range(200):
            queries = [
                {
                    "results": [f"d{d}" for d in rng.choice(40, size=rng.integers(0, 12), replace=False)],
                    "scanned_to": int(rng.integers(0, 12)),
                }
                for _ in range(rng.integers(1, 6))
            ]
            handle.write(
                json.dumps(
                    {"id": number, "scenario": f"t{number % 4}", "participant": "p\u00e9", "queries": queries}
                )
                + "\n"
            )
    # Weights that reach tiny and huge values, so both of orjson's notations and the fallback are met.
    params = SessionParams(weights=(0, 1e-7, 1.0, 1e17), bq=2.0)
    arguments = (str(tmp_path / "qrels"), str(tmp_path / "log.jsonl"), params, ("nsdcg", "srbp"))
    fast = session_cli.score_session_file(*arguments)
    monkeypatch.setattr(session_cli, "orjson", None)
    monkeypatch.setattr(session_io, "_fast_loads", json.loads)
    standard = session_cli.score_session_file(*arguments)
    assert fast == standard
    lines = fast[0]
    assert len(lines) == 200 and any("e-" in line for line in lines) and any("e+" in line for line in lines)
    for line in lines:  # and each is what json.dumps writes of the object it holds
        assert json.dumps(json.loads(line)) == line
