"""A run read in one pass: pyarrow's streaming CSV reader over the file, a batch at a time.

`stream_run_columns(path)` gives the fields of `run.run_columns(read_bytes(path), name)`, without holding the
file's bytes or a whole arrow table: the file goes through a reader that checks each block arrow asks for
(`_PlainCheck`: the rules of `split._plain_newlines`, carried across blocks) while arrow splits the blocks
already read on its own threads; each batch's topics, ids and scores become numpy arrays (and the ids their
hashes) while the next batch is parsed. Rows of a topic may span batches: the runs of equal topics of each
batch are joined to the previous batch's last run when the topic is the same.

On any anomaly (the file not plain, a line with another number of fields, a score arrow does not read or a
NaN, a file too small to be worth it, pyarrow missing, a read error) it returns None and the caller reads
the file the whole way (`run_columns`), so every result and every error message (file, line, field) is the
one that path gives.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from . import split
from .fields import blocked_id_hashes, group_by_topic
from .split import arrow_bytes

# Bytes arrow reads a block at a time: each block's numpy work stays small, and arrow keeps a few blocks
# ahead on its threads.
_BLOCK = 1 << 22


class _PlainCheck:
    """A binary file that arrow reads through, checking each block as `split._plain_newlines` checks a
    whole file and counting its newlines; `plain` turns False at the first byte that breaks the rules."""

    def __init__(self, path: str | Path):
        self._handle = open(path, "rb")  # noqa: SIM115 (closed by `close`, after the reader is done)
        self.plain = True
        self.newlines = 0
        self.size = 0
        self.last = -1  # the last byte read so far (-1: none)
        self.closed = False

    def read(self, nbytes: int = -1) -> bytes:
        data = self._handle.read(nbytes)
        if data and self.plain:
            self._check(data)
        return data

    def _check(self, data: bytes) -> None:
        buffer = np.frombuffer(data, dtype=np.uint8)
        if self.last < 0 and (data[0] <= 32 or data[:3] == b"\xef\xbb\xbf"):
            self.plain = False
            return
        space = buffer <= 32
        lines = int(np.count_nonzero(buffer == 10))
        if (
            (self.last >= 0 and self.last <= 32 and space[0])  # a pair across the blocks' boundary
            or (space[1:] & space[:-1]).any()
            or np.count_nonzero(buffer < 32) != lines  # a tab, a carriage return or another control byte
        ):
            self.plain = False
            return
        self.newlines += lines
        self.size += buffer.size
        self.last = data[-1]

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def writable(self) -> bool:
        return False

    def tell(self) -> int:
        return self._handle.tell()

    def close(self) -> None:
        self.closed = True
        self._handle.close()


class _Runs:
    """The runs of equal consecutive topics of the batches so far, as `group_by_topic` takes them: the first
    row of each run, its length, its topic's bytes."""

    def __init__(self) -> None:
        self.heads: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.texts: list[np.ndarray] = []
        self.rows = 0

    def add(self, topics: np.ndarray) -> None:
        if not topics.size:
            return
        heads = np.concatenate(([0], np.flatnonzero(topics[1:] != topics[:-1]) + 1))
        lengths = np.diff(np.concatenate((heads, [topics.size])))
        texts = topics[heads]
        if self.texts and self.texts[-1][-1] == texts[0]:
            # The batch goes on with the last batch's last topic: that run gets longer.
            self.lengths[-1] = self.lengths[-1].copy()
            self.lengths[-1][-1] += lengths[0]
            heads, lengths, texts = heads[1:], lengths[1:], texts[1:]
        if texts.size:  # (none when the whole batch went on with the last topic)
            self.heads.append(heads + self.rows)
            self.lengths.append(lengths)
            self.texts.append(texts)
        self.rows += topics.size

    def grouped(self):
        """(heads, lengths, head texts) of the whole file."""
        if not self.heads:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype="S8")
        return (
            np.concatenate(self.heads).astype(np.int64),
            np.concatenate(self.lengths).astype(np.int64),
            split._concat_bytes(self.texts),
        )


def stream_run_columns(path: str | Path, name: str):
    """The fields of `run.run_columns(read_bytes(path), name)`, in one pass over the file (the module's
    docstring): (topics, bounds, docs, scores, lines, hashes), or None when the caller should read it the
    whole way. (A tuple, not a RunColumns: run.py imports this module.)"""
    try:
        size = Path(path).stat().st_size
    except OSError:
        return None  # the whole-file path names the error
    if size < split._ARROW_MIN_BYTES:
        return None
    try:
        import pyarrow as pa
        import pyarrow.csv as csv
    except ImportError:
        return None
    try:
        source = _PlainCheck(path)
    except OSError:
        return None
    try:
        return _read(pa, csv, source, name)
    except (pa.ArrowException, OSError, InputError):
        # A line with another number of fields, a score arrow does not read, a topic that is not UTF-8:
        # the whole-file path finds it again and names its line.
        return None
    finally:
        source.close()


def _read(pa, csv, source: _PlainCheck, name: str):
    names = [f"f{k}" for k in range(6)]
    reader = csv.open_csv(
        source,
        memory_pool=pa.system_memory_pool(),  # malloc's, as split.arrow_table's
        read_options=csv.ReadOptions(column_names=names, block_size=_BLOCK),
        parse_options=csv.ParseOptions(
            delimiter=" ", quote_char=False, double_quote=False, escape_char=False, ignore_empty_lines=False
        ),
        convert_options=csv.ConvertOptions(
            column_types={"f0": pa.binary(), "f2": pa.binary(), "f4": pa.float64()},
            include_columns=["f0", "f2", "f4"],
            strings_can_be_null=False,
            null_values=[],
            true_values=[],
            false_values=[],
        ),
    )
    runs = _Runs()
    docs: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    hashes: list[np.ndarray] = []
    for batch in reader:
        if not source.plain:
            return None
        values = batch.column(2)  # the columns of include_columns, in order: topic, docid, score
        if values.null_count:
            return None
        score = np.frombuffer(values.buffers()[1], dtype=np.float64)[
            values.offset : values.offset + len(values)
        ]
        if np.isnan(score).any():
            return None  # refused by the whole-file path, with its line
        topic = arrow_bytes(pa.chunked_array([batch.column(0)]))
        doc = arrow_bytes(pa.chunked_array([batch.column(1)]))
        runs.add(topic)
        docs.append(doc)
        scores.append(score.copy())  # the batch's buffers are freed with it
        hashes.append(blocked_id_hashes(doc))
    if not source.plain or source.size == 0 or source.last == 32:
        return None
    if source.newlines != runs.rows - (source.last != 10):
        return None  # one row a line, as in split.arrow_table
    lines = np.arange(1, runs.rows + 1, dtype=np.int64)  # a plain file has no blank line
    all_docs = split._concat_bytes(docs)
    all_scores = np.concatenate(scores)
    all_hashes = np.concatenate(hashes)
    topics, bounds, lines, all_docs, all_scores, all_hashes = group_by_topic(
        runs.grouped(), lines, name, all_docs, all_scores, all_hashes
    )
    return topics, bounds, all_docs, all_scores, lines, all_hashes
