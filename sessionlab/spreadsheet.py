"""Spreadsheet-safe CSV cells (docs/file-formats.md, "Spreadsheet safety").

A spreadsheet reads a cell that starts with `=`, `+`, `-` or `@` as a formula (and a leading tab or CR can
hide one), so a participant's query or an imported code like `=HYPERLINK(...)` would run when a researcher
opens the export. Such a text cell gets a leading `'`, which spreadsheets show as text and do not keep.

Numbers stay numbers: a number value is never touched, nor is text that is a plain decimal number
(`-0.5`, `+3`, `-1.5e-3`), which a spreadsheet reads as that number, not as a formula. `raw=True` (the
exports' `--raw` / `?raw=1`) writes every cell as it is, for pipelines that read the CSV as data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")


def safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.match(value):
        return "'" + value
    return value


def safe_rows(rows: Iterable[Iterable[Any]], *, raw: bool = False) -> Iterable[list[Any]]:
    """The rows with every cell made safe (or as they are when `raw`)."""
    if raw:
        return ([*row] for row in rows)
    return ([safe_cell(value) for value in row] for row in rows)
