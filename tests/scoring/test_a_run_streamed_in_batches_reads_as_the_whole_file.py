"""The one-pass reader of a run (scoring/lib/trec_io/stream.py: pyarrow's streaming CSV reader, a batch at a
time) gives exactly the columns of the whole-file reader, whatever the batches cut through (a topic's rows
over several batches, topics that come back later, ties), and hands every file it cannot read exactly (a tab,
a carriage return, two spaces, a blank line, a field missing or extra, a score that is not a number...) to
the whole-file path, so that `eval` prints the same bytes and the same error (file, line, field).

`_ARROW_MIN_BYTES` is lowered to 0 so that these small files take the streaming path ("fast"), or raised out
of reach for the numpy path that every file took before ("slow"); `_BLOCK`, the bytes arrow reads at a time,
is lowered so that a small file is many batches.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.lib import trec_io
from scoring.lib.cli import main
from scoring.lib.trec_io import stream

pytest.importorskip("pyarrow")

QRELS = b"1 0 d1 3\n1 0 d2 2\n1 0 d3 0\n2 0 d1 1\n2 0 d7 2\n3 0 d9 2\n"


def _mode(monkeypatch, fast: bool, block: int = 1 << 22) -> None:
    monkeypatch.setattr(trec_io.split, "_ARROW_MIN_BYTES", 0 if fast else 1 << 62)
    monkeypatch.setattr(stream, "_BLOCK", block)


def _whole(path):
    return trec_io.run.run_columns(trec_io.split.read_bytes(path), str(path))


def _streamed(path):
    fields = stream.stream_run_columns(path, str(path))
    return None if fields is None else trec_io.RunColumns(*fields)


def _assert_same_columns(got, expected):
    assert got.topics == expected.topics
    for name in ("bounds", "docs", "scores", "lines", "hashes"):
        a, b = getattr(got, name), getattr(expected, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name


def _eval(monkeypatch, capsys, fast: bool, argv, block: int = 1 << 22):
    _mode(monkeypatch, fast, block)
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _run_lines(rng, topics: int, order: str) -> list[str]:
    lines = []
    for t in range(topics):
        topic = f"q{t}" if t % 3 else f"topic-number-{t}"  # short and long (over 8 bytes) topic ids
        n = int(rng.integers(1, 80))
        docs = [f"d{x}" if x % 2 else f"DOC-{x:012d}" for x in rng.choice(500, size=n, replace=False)]
        scores = np.round(rng.normal(0, 2, size=n), 1)  # rounded: ties
        listing = np.argsort(-scores, kind="stable") if order != "shuffled" else rng.permutation(n)
        lines += [f"{topic} Q0 {docs[i]} {r} {scores[i]} run" for r, i in enumerate(listing, 1)]
    if order == "topics split":  # a topic's lines in two places of the file (trec_eval allows it)
        rng.shuffle(lines)
    return lines


@pytest.mark.parametrize("block", [64, 1000, 1 << 22])
@pytest.mark.parametrize("order", ["best first", "shuffled", "topics split"])
@pytest.mark.parametrize("ending", [b"\n", b""])
def test_a_streamed_run_has_the_whole_files_columns(tmp_path, monkeypatch, block, order, ending):
    rng = np.random.default_rng(len(order) + block)
    path = tmp_path / "run"
    path.write_bytes("\n".join(_run_lines(rng, 40, order)).encode() + ending)
    _mode(monkeypatch, True, block)
    got = _streamed(path)
    assert got is not None  # streamed, not handed on
    _assert_same_columns(got, _whole(path))
    assert len(got.topics) == 40 and got.lines.size == len(path.read_bytes().splitlines())


def test_a_topic_running_over_many_batches_stays_one_topic(tmp_path, monkeypatch):
    path = tmp_path / "run"
    lines = [f"long Q0 d{i} {i} {1000 - i} run" for i in range(300)] + ["next Q0 d1 1 1 run"]
    path.write_bytes("\n".join(lines).encode() + b"\n")
    _mode(monkeypatch, True, 64)
    got = _streamed(path)
    assert got is not None and got.topics == ["long", "next"]
    assert got.bounds.tolist() == [0, 300, 301]
    _assert_same_columns(got, _whole(path))


def test_the_runs_of_a_topic_over_several_batches_are_joined():
    """Joined where the batches meet, so that the grouping has nothing to regroup (no sort)."""
    runs = stream._Runs()
    for batch in ([b"a", b"a"], [b"a"], [b"a", b"b"], [b"b", b"c", b"a"]):
        runs.add(np.array(batch))
    heads, lengths, texts = runs.grouped()
    assert heads.tolist() == [0, 4, 6, 7] and lengths.tolist() == [4, 2, 1, 1]
    assert texts.tolist() == [b"a", b"b", b"c", b"a"]


PLAIN = b"1 Q0 d3 1 9.0 tag\n1 Q0 d1 2 8.0 tag\n1 Q0 d5 3 8.0 tag\n2 Q0 d7 1 3.0 tag\n2 Q0 d1 2 2.0 tag\n"

# What the streaming reader must hand on, each put at the start, in a later block, or last.
ANOMALIES = {
    "a tab": b"2 Q0\td9 3 1.0 tag\n",
    "a carriage return": b"2 Q0 d9 3 1.0 tag\r\n",
    "a lone carriage return": b"2 Q0 d9 3 1.0 tag\r2 Q0 d8 4 0.5 tag\n",
    "two spaces": b"2 Q0 d9  3 1.0 tag\n",
    "a blank line": b"\n2 Q0 d9 3 1.0 tag\n",
    "a space first": b" 2 Q0 d9 3 1.0 tag\n",
    "a field missing": b"2 Q0 d9 3 1.0\n",
    "a field more": b"2 Q0 d9 3 1.0 tag more\n",
    "a score not a number": b"2 Q0 d9 3 one tag\n",
    "a NaN": b"2 Q0 d9 3 nan tag\n",
    "a topic not UTF-8": b"\xff Q0 d9 3 1.0 tag\n",
    "a document listed twice": b"2 Q0 d7 3 1.0 tag\n",
    "a NUL": b"2 Q0 d\x009 3 1.0 tag\n",
    "a byte-order mark": b"\xef\xbb\xbf2 Q0 d9 3 1.0 tag\n",
}


@pytest.mark.parametrize(
    ("kind", "where"),
    [
        (kind, where)
        for kind in sorted(ANOMALIES)
        for where in ("first", "later block", "last")
        if where == "first" or kind != "a byte-order mark"  # a mark is only a mark at the start
    ],
)
def test_an_anomaly_sends_the_run_the_whole_way_with_the_same_answer(
    tmp_path, monkeypatch, capsys, kind, where
):
    body = PLAIN * 40
    bad = ANOMALIES[kind]
    data = {"first": bad + body, "later block": body[:900] + bad + body[900:], "last": body + bad}[where]
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes(QRELS)
    run.write_bytes(data)
    _mode(monkeypatch, True, 256)
    if kind != "a document listed twice":  # streamed: refused later, by check_listed_once
        assert stream.stream_run_columns(run, str(run)) is None
    argv = ["eval", str(qrels), str(run), "-m", "ndcg", "-m", "ndcg_cut.2"]
    slow = _eval(monkeypatch, capsys, False, argv)
    fast = _eval(monkeypatch, capsys, True, argv, 256)
    assert fast == slow


def test_a_pair_of_spaces_across_two_reads_is_seen(tmp_path):
    path = tmp_path / "run"
    path.write_bytes(b"1 Q0 d1 1 2.0 tag \n")  # "tag" then a space, then the newline: two in a row
    source = stream._PlainCheck(path)
    try:
        source.read(18)  # up to the space
        assert source.plain
        source.read(10)  # the newline
        assert not source.plain
    finally:
        source.close()


LINE_PARTS = st.tuples(
    st.sampled_from(["1", "2", "10", "q3", "topic-longer-than-8", "é"]),
    st.sampled_from(["a", "b", "d1", "D2", "doc-0000000001", "é", "x" * 17]),
    st.sampled_from(["1", "2.5", "-0", "0", "-1.25", "1e3", "+3", ".5", "7.", "inf", "2.5", "1"]),
)
GLUE = [b" ", b" ", b" ", b" ", b"  ", b"\t", b"\r", b"\r\n", b"\n"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(LINE_PARTS, min_size=1, max_size=60),
    damage=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 5), st.sampled_from(GLUE)), max_size=2),
    block=st.sampled_from([40, 97, 1 << 22]),
    options=st.sampled_from([[], ["-c"], ["--vectors"]]),
)
def test_eval_prints_the_same_bytes_streamed_or_read_whole(
    tmp_path, monkeypatch, capsys, parts, damage, block, options
):
    lines = [
        [t.encode(), b"Q0", d.encode(), str(r).encode(), s.encode(), b"run"]
        for r, (t, d, s) in enumerate(parts)
    ]
    rows = []
    for i, fields in enumerate(lines):
        glue = [b" "] * 5
        for at, gap, what in damage:
            if at == i:
                glue[gap % 5] = what
        rows.append(b"".join(f + g for f, g in zip(fields, glue + [b""], strict=True)))
    (tmp_path / "qrels").write_bytes("1 0 a 1\n2 0 d1 2\nq3 0 é 3\n10 0 b 1\n".encode())
    (tmp_path / "run").write_bytes(b"\n".join(rows) + b"\n")
    argv = ["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), *options]
    assert _eval(monkeypatch, capsys, True, argv, block) == _eval(monkeypatch, capsys, False, argv)


@pytest.mark.needs_data
@pytest.mark.parametrize(
    ("expected_name", "qrels", "run", "extra"),
    [
        ("out.test.aq", "qrels.test", "results.test", []),
        ("out.test.aql", "qrels.rel_level", "results.test", []),
        ("out.test.aqc", "qrels.test", "results.trunc", ["-c"]),
    ],
)
def test_trec_eval_s_regression_runs_streamed_print_trec_eval_s_lines(
    shared_data, tmp_path, monkeypatch, capsys, expected_name, qrels, run, extra
):
    """trec_eval's own runs are tab-separated and padded, so they go the whole way; written as plain
    files (single spaces, the text after the tag dropped: trec_eval ignores it) they are streamed, and
    both print what trec_eval prints."""
    from tests.scoring.test_trec_eval_regression import eval_lines, expected_lines

    folder = shared_data / "peer-data" / "trec_eval-test"
    plain = tmp_path / run
    plain.write_bytes(
        b"".join(b" ".join(line.split()[:6]) + b"\n" for line in (folder / run).read_bytes().splitlines())
    )
    _mode(monkeypatch, True, 4096)
    assert stream.stream_run_columns(folder / run, run) is None  # tabs: the whole way
    streamed = _streamed(plain)
    assert streamed is not None and len(streamed.topics) >= 2
    _assert_same_columns(streamed, _whole(plain))
    expected = expected_lines(folder / expected_name)
    for path in (folder / run, plain):
        argv = ["eval", str(folder / qrels), str(path), *extra, "-m", "ndcg", "-m", "ndcg_cut"]
        got = eval_lines(capsys, argv)
        assert sorted(got) == sorted(expected)
        assert [line[1] for line in got] == [line[1] for line in expected]
