"""The fast file path of `python -m scoring eval` (pyarrow's CSV reader on plain files, and the ranking by
rows of `read_ranked`) gives exactly what the numpy splitter and `metrics.rank_columns` give: the same
printed bytes, the same errors naming file, line and field, the same exit status.

The fast path is taken only for files of at least `_ARROW_MIN_BYTES`; the tests lower that to 0 ("fast") or
raise it out of reach ("numpy", the path every file took before) and compare the two.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.lib import metrics, trec_io
from scoring.lib.cli import main
from scoring.lib.errors import InputError

pytest.importorskip("pyarrow")

QRELS = "1 0 d1 3\n1 0 d2 2\n1 0 d3 0\n1 0 d4 1\n2 0 d1 1\n3 0 d9 2\n"
RUN = (
    "1 Q0 d3 1 9.0 tag\n1 Q0 d1 2 8.0 tag\n1 Q0 d5 3 8.0 tag\n1 Q0 d2 4 7.5 tag\n"
    "2 Q0 d7 1 3.0 tag\n2 Q0 d1 2 2.0 tag\n"
)


def _mode(monkeypatch, fast: bool) -> None:
    monkeypatch.setattr(trec_io.split, "_ARROW_MIN_BYTES", 0 if fast else 1 << 62)


def _eval(monkeypatch, capsys, fast: bool, argv: list[str]):
    _mode(monkeypatch, fast)
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _both(monkeypatch, capsys, qrels_path, run_path, options=()):
    argv = ["eval", str(qrels_path), str(run_path), *options]
    return _eval(monkeypatch, capsys, False, argv), _eval(monkeypatch, capsys, True, argv)


def _write(tmp_path, qrels: bytes, run: bytes):
    (tmp_path / "qrels").write_bytes(qrels)
    (tmp_path / "run").write_bytes(run)
    return tmp_path / "qrels", tmp_path / "run"


# --- the fast path is taken for plain files, and refused for anything else --------------------------------


def test_a_plain_file_is_split_by_arrow_with_the_numpy_splitters_result(monkeypatch):
    data = RUN.encode()
    _mode(monkeypatch, True)
    assert trec_io.split.arrow_table(data, 6, {0: trec_io.split.binary}) is not None
    fast = trec_io.split_columns(data, "run", 6, (0, 2, 4), trec_io.RUN_FIELDS, extra_ok=True)
    _mode(monkeypatch, False)
    slow = trec_io.split_columns(data, "run", 6, (0, 2, 4), trec_io.RUN_FIELDS, extra_ok=True)
    for k in (0, 2, 4):
        assert fast.fields[k].dtype == slow.fields[k].dtype
        assert fast.fields[k].tolist() == slow.fields[k].tolist()
    assert fast.lines.tolist() == slow.lines.tolist() == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    "data",
    [
        b"1 Q0 d1 1 2.0 t\n1  Q0 d2 2 1.0 t\n",  # two spaces: an empty field for arrow
        b"1 Q0 d1 1 2.0 t\n1  d2 2 1.0 t\n",  # ... and a field missing: six fields for arrow, five for us
        b"1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 \n",  # an empty last field
        b"1 Q0 d1 1 2.0 t\n Q0 d2 2 1.0 t\n",  # an empty first field
        b"1 Q0 d1 1 2.0 t\n1\tQ0\td2\t2\t1.0\tt\n",  # a tab
        b"1 Q0 d1 1 2.0 t\r\n1 Q0 d2 2 1.0 t\r\n",  # carriage returns
        b"1 Q0 d1 1 2.0 t\r1 Q0 d2 2 1.0 t\n",  # a lone carriage return (a line break for arrow)
        b"1 Q0 d1 1 2.0 t\n\n1 Q0 d2 2 1.0 t\n",  # a blank line (the line numbers would shift)
        b" 1 Q0 d1 1 2.0 t\n",  # a space first
        b"1 Q0 d1 1 2.0 t \n",  # a space before the newline
        b"1 Q0 d1 1 2.0 t ",  # a space last
        b"\xef\xbb\xbf1 Q0 d1 1 2.0 t\n",  # a byte-order mark, which arrow would skip
        b"1 Q0 d\x0b1 1 2.0 t\n",  # a control byte inside an id
        b"1 Q0 d\x001 1 2.0 t\n",  # a NUL inside an id
        b"1 Q0 d1 1 2.0 t extra\n",  # more fields (trec_eval's own test run has them)
        b"1 Q0 d1 1 2.0\n",  # fewer fields
    ],
)
def test_anything_but_a_plain_file_goes_to_the_numpy_splitter(monkeypatch, data):
    _mode(monkeypatch, True)
    assert trec_io.split.arrow_table(data, 6, {0: trec_io.split.binary}) is None


def test_small_files_skip_arrow_and_so_its_import():
    assert trec_io.split._ARROW_MIN_BYTES >= 1 << 16
    assert trec_io.split.arrow_table(RUN.encode(), 6, {0: trec_io.split.binary}) is None


# --- read_ranked equals rank_columns of read_run_columns ---------------------------------------------------


def _ranked_both(monkeypatch, qrels_path, run_path, all_topics):
    _mode(monkeypatch, False)
    qrels = trec_io.read_qrels_columns(qrels_path)
    expected = metrics.rank_columns(qrels, trec_io.read_run_columns(run_path), all_topics)
    _mode(monkeypatch, True)
    qrels = trec_io.read_qrels_columns(qrels_path)
    return expected, trec_io.read_ranked(qrels, run_path, all_topics)


def _assert_same_ranking(expected, got):
    assert got.topics == expected.topics
    for name in ("grades", "judged", "lengths"):
        a, b = getattr(expected, name), getattr(got, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name


@pytest.mark.parametrize("all_topics", [False, True])
@pytest.mark.parametrize("order", ["best first", "shuffled", "worst first"])
def test_read_ranked_ranks_as_rank_columns(tmp_path, monkeypatch, order, all_topics):
    rng = np.random.default_rng(11)
    qrels_lines, run_lines = [], []
    for t in range(30):
        topic = f"q{t}" if t % 3 else f"topic-number-{t}"  # short and long (over 8 bytes) topic ids
        n = int(rng.integers(1, 60))
        docs = [f"d{x}" if x % 2 else f"DOC-{x:012d}" for x in rng.choice(400, size=n, replace=False)]
        scores = np.round(rng.normal(0, 2, size=n), 1)  # rounded: ties
        listing = np.argsort(-scores, kind="stable")
        if order == "shuffled":
            listing = rng.permutation(n)
        elif order == "worst first":
            listing = listing[::-1]
        run_lines += [f"{topic} Q0 {docs[i]} {r} {scores[i]} run" for r, i in enumerate(listing, 1)]
        if t % 7 != 3:  # some run topics have no judgments
            judged = rng.choice(400, size=25, replace=False)
            names = [f"d{x}" if x % 2 else f"DOC-{x:012d}" for x in judged]
            qrels_lines += [
                f"{topic} 0 {d} {g}" for d, g in zip(names, rng.integers(-1, 4, size=25), strict=True)
            ]
    qrels_lines += ["only-judged 0 d1 2", "only-judged 0 d3 1"]  # a judged topic missing from the run
    qrels_path, run_path = _write(
        tmp_path, "\n".join(qrels_lines).encode() + b"\n", "\n".join(run_lines).encode()
    )
    _mode(monkeypatch, True)
    assert trec_io.split.arrow_table(run_path.read_bytes(), 6, {0: trec_io.split.binary}) is not None
    expected, got = _ranked_both(monkeypatch, qrels_path, run_path, all_topics)
    _assert_same_ranking(expected, got)
    assert (got.grades != metrics.UNJUDGED).sum() > 20  # the join found judged documents
    by_rows = trec_io.ranked._rank_by_rows(
        trec_io.read_qrels_columns(qrels_path),
        trec_io.run.run_columns(run_path.read_bytes(), str(run_path)),
        all_topics,
    )
    assert by_rows is not None  # not the general path
    _assert_same_ranking(expected, by_rows)


@pytest.mark.parametrize("id_length", [3, 8, 11, 16])
@pytest.mark.parametrize("shuffled", [False, True])
def test_a_rectangular_run_of_ids_of_one_length_ranks_as_rank_columns(
    tmp_path, monkeypatch, id_length, shuffled
):
    """Every topic lists as many documents, every id has the same length: the shortcuts of both."""
    rng = np.random.default_rng(id_length)
    qrels_lines, run_lines = [], []
    for t in range(12):
        ids = [f"{x:0{id_length}d}" for x in rng.choice(10 ** min(id_length, 6), size=40, replace=False)]
        scores = np.round(rng.gamma(2.0, 1.0, size=40), 1)
        listing = rng.permutation(40) if shuffled else np.argsort(-scores, kind="stable")
        run_lines += [f"{t} Q0 {ids[i]} {r} {scores[i]} run" for r, i in enumerate(listing, 1)]
        qrels_lines += [f"{t} 0 {d} {g}" for d, g in zip(ids[::3], rng.integers(0, 4, size=14), strict=True)]
    qrels_path, run_path = _write(
        tmp_path, "\n".join(qrels_lines).encode() + b"\n", "\n".join(run_lines).encode() + b"\n"
    )
    _mode(monkeypatch, True)
    run = trec_io.run.run_columns(run_path.read_bytes(), str(run_path))
    _mode(monkeypatch, False)
    assert run.docs.tolist() == trec_io.read_run_columns(run_path).docs.tolist()
    expected, got = _ranked_both(monkeypatch, qrels_path, run_path, False)
    _assert_same_ranking(expected, got)
    assert trec_io.ranked._rank_by_rows(trec_io.read_qrels_columns(qrels_path), run, False) is not None
    assert (got.grades != metrics.UNJUDGED).sum() == 12 * 14


def test_a_topic_split_over_the_run_is_grouped_as_before(tmp_path, monkeypatch):
    run = b"1 Q0 a 1 3 r\n2 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 c 3 2 r\n2 Q0 b 2 1 r\n"
    qrels_path, run_path = _write(tmp_path, b"1 0 a 1\n1 0 c 2\n2 0 b 3\n", run)
    expected, got = _ranked_both(monkeypatch, qrels_path, run_path, False)
    _assert_same_ranking(expected, got)


def test_ids_whose_hashes_share_a_prefix_take_the_general_path(tmp_path, monkeypatch):
    real = metrics.id_hashes
    for module in (trec_io.qrels, trec_io.run, trec_io.ranked):  # prefixes all 0
        monkeypatch.setattr(module, "id_hashes", lambda ids: real(ids) & np.uint64(0xFFFF))
    for module in (trec_io.run, trec_io.stream):
        monkeypatch.setattr(module, "blocked_id_hashes", lambda ids: real(ids) & np.uint64(0xFFFF))
    qrels_path, run_path = _write(tmp_path, QRELS.encode(), RUN.encode())
    expected, got = _ranked_both(monkeypatch, qrels_path, run_path, True)
    _assert_same_ranking(expected, got)
    assert (got.grades != metrics.UNJUDGED).sum() == 4


def test_a_document_listed_twice_is_refused_at_its_second_line(tmp_path, monkeypatch, capsys):
    run = RUN + "1 Q0 d1 9 0.5 tag\n"
    qrels_path, run_path = _write(tmp_path, QRELS.encode(), run.encode())
    slow, fast = _both(monkeypatch, capsys, qrels_path, run_path)
    assert fast == slow
    assert fast[0] == 2 and fast[1] == ""
    assert fast[2] == f"{run_path}:7: document 'd1' is listed twice for topic '1'\n"


# --- whole `eval` runs: identical bytes and errors on varied inputs --------------------------------------

TOPICS = ["1", "2", "10", "q3", "topic-longer-than-8", "é"]
DOCS = ["a", "b", "d1", "D2", "doc-0000000001", "doc-0000000002", "é", "x" * 17]
SCORES = [
    "1",
    "2.5",
    "-0",
    "0",
    "-1.25",
    "1e3",
    "2E-2",
    "+3",
    ".5",
    "7.",
    "inf",
    "-inf",
    "1_0",
    "nan",
    "abc",
    "0x10",
    "12345678901234567890.5",
    "0.1000000000000000055511151231257827",
]
GRADES = ["0", "1", "2", "3", "-1", "+1", "0x1", "1.0", "x"]
BREAKS = ["", "", "", "  ", "  ", "\t", "\r", "\n", "\x0b", "\x00", " extra", "\xff"]


@st.composite
def files(draw):
    qrels = []
    for _ in range(draw(st.integers(1, 12))):
        grade = draw(st.sampled_from(GRADES[:5])) if draw(st.booleans()) else draw(st.sampled_from(GRADES))
        qrels.append(f"{draw(st.sampled_from(TOPICS))} 0 {draw(st.sampled_from(DOCS))} {grade}")
    run = []
    for rank in range(draw(st.integers(1, 25))):
        score = (
            draw(st.sampled_from(SCORES[:7])) if draw(st.integers(0, 4)) else draw(st.sampled_from(SCORES))
        )
        run.append(f"{draw(st.sampled_from(TOPICS))} Q0 {draw(st.sampled_from(DOCS))} {rank} {score} run")
    for lines in (qrels, run):  # now and then a damaged line: a bad separator, a missing field, junk bytes
        if draw(st.integers(0, 3)) == 0:
            at = draw(st.integers(0, len(lines) - 1))
            fields = lines[at].split(" ")
            cut = draw(st.integers(0, len(fields)))
            glue = draw(st.sampled_from(BREAKS))
            if draw(st.booleans()):
                fields = fields[:cut] + fields[cut + 1 :]
            lines[at] = " ".join(fields[:cut]) + (glue or " ") + " ".join(fields[cut:])
    ending = draw(st.sampled_from(["\n", "", "\r\n", "\n\n"]))
    return "\n".join(qrels).encode("utf-8", "surrogateescape") + b"\n", ("\n".join(run) + ending).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=files(),
    options=st.sampled_from([[], ["-c"], ["-m", "ndcg_cut.1,3", "-m", "dcg_cut_2"], ["--vectors"]]),
)
def test_eval_prints_the_same_bytes_and_errors_on_both_paths(tmp_path, monkeypatch, capsys, case, options):
    qrels_path, run_path = _write(tmp_path, *case)
    slow, fast = _both(monkeypatch, capsys, qrels_path, run_path, options)
    assert fast == slow


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("1 Q0 d1 1 2.0 tag\n1 Q0 d2 2 nan tag\n", "run:2: score 'nan' is not a number"),
        ("1 Q0 d1 1 2.0 tag\n1 Q0 d2 2 two tag\n", "run:2: score 'two' is not a number"),
        (
            "1 Q0 d1 1 2.0 tag\n1 Q0 d2 2 1.0\n",
            "run:2: expected at least 6 fields (topic Q0 docid rank score tag), found 5",
        ),
        (
            "1 Q0 d1 1 2.0 tag\n\n1 Q0 d2 2  tag\n",
            "run:3: expected at least 6 fields (topic Q0 docid rank score tag), found 5",
        ),
        # (the numpy scalar's repr is what it always printed: unchanged here, on purpose)
        ("1 Q0 d1 1 2.0 tag\n\xff Q0 d2 2 1.0 tag\n", "run:2: topic np.bytes_(b'\\xff') is not UTF-8 text"),
    ],
)
def test_a_bad_run_line_is_named_the_same_way_on_both_paths(tmp_path, monkeypatch, capsys, run, message):
    qrels_path, run_path = _write(tmp_path, QRELS.encode(), run.encode("latin-1"))
    slow, fast = _both(monkeypatch, capsys, qrels_path, run_path)
    assert fast == slow
    assert fast[:2] == (2, "")
    assert fast[2] == f"{tmp_path}/{message}\n"


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ("1 0 d1 1\n1 0 d2\n", "qrels:2: expected 4 fields (topic iteration docid grade), found 3"),
        ("1 0 d1 1\n1 0  2\n", "qrels:2: expected 4 fields (topic iteration docid grade), found 3"),
        ("1 0 d1 1\n1 0 d2 \n", "qrels:2: expected 4 fields (topic iteration docid grade), found 3"),
        ("1 0 d1 1\n1 0 d2 high\n", "qrels:2: grade 'high' is not an integer"),
        ("1 0 d1 1\n1 0 d1 2\n", "qrels:2: document 'd1' of topic '1' is judged twice (1 and 2)"),
        ("1 0 d1 1\n1 0 d2 0x1\n", "qrels:2: grade '0x1' is not an integer"),
    ],
)
def test_a_bad_qrels_line_is_named_the_same_way_on_both_paths(tmp_path, monkeypatch, capsys, qrels, message):
    qrels_path, run_path = _write(tmp_path, qrels.encode(), RUN.encode())
    slow, fast = _both(monkeypatch, capsys, qrels_path, run_path)
    assert fast == slow
    assert fast[:2] == (2, "")
    assert fast[2] == f"{tmp_path}/{message}\n"


def test_read_run_columns_refuses_a_repeated_document_on_the_fast_path(tmp_path, monkeypatch):
    _mode(monkeypatch, True)
    path = tmp_path / "run"
    path.write_bytes(b"1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n1 Q0 a 3 0 r\n")
    with pytest.raises(InputError, match=r"run:3: document 'a' is listed twice for topic '1'"):
        trec_io.read_run_columns(path)


def test_the_blocked_hashes_are_metrics_id_hashes():
    rng = np.random.default_rng(5)
    for longest in (1, 3, 8, 9, 17, 30):
        ids = np.array(
            [
                bytes(rng.integers(1, 256, size=rng.integers(1, longest + 1)).astype(np.uint8))
                for _ in range(70_000)
            ]
        )
        assert np.array_equal(trec_io.fields.blocked_id_hashes(ids), metrics.id_hashes(ids))
