"""Reading an archive's JSON so that every object knows its line, and refusing text the database cannot
store, before anything is written: each error names the file, the line and the JSON path."""

from __future__ import annotations

import json
from json import scanner
from json.decoder import (  # type: ignore[attr-defined]  # both undeclared in the stubs
    JSONObject,  # the pure-Python object parser
    scanstring,  # the C string scanner where built
)

from studies.interchange import ImportFailure


class LinedDict(dict):
    """A JSON object that knows the line it starts on."""

    line: int | None = None


def load_json_with_lines(
    text: str,
    path: str,
    *,
    max_string_bytes: int | None = None,
    first_line: int = 1,
    where: str | None = None,
):
    """json.loads, except that every object is a LinedDict carrying its line (the pure-Python scanner, with
    the object parser wrapped); a syntax error names the file and line. With `max_string_bytes`, a string
    longer than that in the file (a document's text, say) is refused at its line as soon as it is read,
    before the rest is parsed (ARCHIVE_MAX_DOCUMENT_BYTES). `first_line`: the line `text` starts on in its
    file (the streamed import parses one value of the archive at a time), `where` its JSON path."""
    # The parser asks for lines in the order of the text (an object's start before its members'), so a
    # running count serves them; a list of every newline's position was most of the memory a big value took.
    counted = [0, first_line]  # up to this position, this line

    def line_of(position: int) -> int:
        done, line = counted
        if position < done:
            return first_line + text.count("\n", 0, position)
        line += text.count("\n", done, position)
        counted[:] = [position, line]
        return line

    def parse_string(s, end, strict=True):
        value, after = scanstring(s, end, strict)
        # Its length in the file bounds its UTF-8 size from above (an escape is longer than what it
        # stands for), so only a long one is measured.
        if max_string_bytes is not None and after - end > max_string_bytes:
            size = len(value.encode("utf-8", "surrogatepass"))
            if size > max_string_bytes:
                raise ImportFailure(
                    path,
                    line_of(end),
                    None,
                    f"a string of {size} bytes is over ARCHIVE_MAX_DOCUMENT_BYTES ({max_string_bytes} bytes)",
                )
        return value, after

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None, _w=None):
        line = line_of(s_and_end[1])  # before its members are parsed: the lines are asked for in order
        value, end = JSONObject(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo)
        lined = LinedDict(value)
        lined.line = line
        return lined, end

    decoder = json.JSONDecoder()
    # The stubs declare neither attribute nor the pure-Python scanner; the json module reads both.
    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.parse_string = parse_string  # type: ignore[attr-defined]
    decoder.scan_once = scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    invalid = f"invalid JSON in {where}" if where else "invalid JSON"
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as error:
        raise ImportFailure(
            path, first_line + error.lineno - 1, None, f"{invalid}: {error.msg} (column {error.colno})"
        ) from None
    except RecursionError:
        raise ImportFailure(path, first_line, None, f"{invalid}: nested too deeply") from None


def text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "a NUL character (\\u0000), which the database cannot store"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # only a lone surrogate: a valid pair was decoded into one character
        code, at = ord(text[error.start]), error.start + 1
        return f"a lone UTF-16 surrogate (U+{code:04X}, half a character such as an emoji) at character {at}"
    return None


def refuse_unstorable_text(data, path: str, *, where: str = "$", line: int | None = None) -> None:
    """Every key and string of the archive must be text the database can store: a lone surrogate (a JSON
    escape such as \\ud83d without its pair) or a NUL is refused naming file, line and field, before anything
    is written (it was a traceback from the database driver, half-way through the import). `where` and
    `line`: the JSON path of `data` and its line, for a value that is part of an archive."""
    stack = [(data, where, getattr(data, "line", line))]
    while stack:
        value, where, line = stack.pop()
        if isinstance(value, dict):
            line = getattr(value, "line", line)
            for key, item in value.items():
                problem = text_problem(key)
                if problem:
                    raise ImportFailure(path, line, where, f"a key holds {problem}")
                stack.append((item, f"{where}.{key}", line))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]", line) for i, item in enumerate(value))
        elif isinstance(value, str):
            problem = text_problem(value)
            if problem:
                raise ImportFailure(path, line, where, f"the text holds {problem}")
