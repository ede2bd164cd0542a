"""Readers for TREC files. Each reads the whole file before returning, so a bad line means no partial result.

The file readers split whole files with numpy (a run of 10 million lines is read in seconds rather than a
minute of per-line Python); `parse_qrels_lines` stays the simple per-line reference for small inputs. One
module per step, every public name re-exported here:

- split: a file's bytes into whitespace-separated fields (numpy, or pyarrow's CSV reader on plain files);
- fields: those fields as values (UTF-8 ids, numbers), grouped by topic;
- qrels: `topic iteration docid grade`, as {topic: {docid: grade}} or as columns;
- run: `topic Q0 docid rank score tag`, as {topic: {docid: score}} or as columns;
- stream: a plain run file's columns in one pass (pyarrow's streaming CSV reader), or None: the whole way;
- ranked: a run ranked against the qrels in one go (`read_ranked`, what `python -m scoring eval` uses).
"""

from .qrels import QRELS_FIELDS, Qrels, QrelsColumns, parse_qrels_lines, read_qrels, read_qrels_columns
from .ranked import read_ranked, start_reading_run
from .run import RUN_FIELDS, Run, RunColumns, read_run, read_run_columns
from .split import Columns, split_columns

__all__ = [
    "QRELS_FIELDS",
    "RUN_FIELDS",
    "Columns",
    "Qrels",
    "QrelsColumns",
    "Run",
    "RunColumns",
    "parse_qrels_lines",
    "read_qrels",
    "read_qrels_columns",
    "read_ranked",
    "read_run",
    "read_run_columns",
    "split_columns",
    "start_reading_run",
]
