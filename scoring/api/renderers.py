"""The CSV renderer of the scoring API (docs/api.md)."""

from __future__ import annotations

import csv
import io

from rest_framework.renderers import BaseRenderer

from sessionlab.spreadsheet import safe_rows


class CSVRenderer(BaseRenderer):
    """CSV of flat rows (`?format=csv` or `Accept: text/csv`). `render` takes what a view would answer in
    JSON: a list of dicts, or a page ({"results": [...]}) of them; `lines` writes the same one line at a time,
    for a StreamingHttpResponse of rows never held whole (ScoringRunQueryScoreList does). The header is the
    first row's keys (or the one given); a list value becomes one cell per item, headed `<key>@1`, `<key>@2`,
    ...; booleans are true/false, None an empty cell. Text cells a spreadsheet would run as formulas get a
    leading ' unless ?raw=1 (sessionlab/spreadsheet.py). An error is answered in JSON whatever was asked (the
    view's finalize_response), so `render` only meets rows."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if isinstance(data, dict):
            data = data["results"] if isinstance(data.get("results"), list) else [data]
        request = (renderer_context or {}).get("request")
        raw = request is not None and request.query_params.get("raw", "").lower() in {"1", "true"}
        return "".join(self.lines(data, raw=raw)).encode(self.charset)

    @staticmethod
    def lines(rows, *, header: list[str] | None = None, raw: bool = False):
        """The CSV of `rows` (an iterable of dicts, values in column order) as an iterator of lines."""
        buffer = io.StringIO()
        writer = csv.writer(buffer)

        def line(cells):
            buffer.seek(0)
            buffer.truncate()
            writer.writerow(cells)
            return buffer.getvalue()

        if header is not None:
            yield line(header)
        for row in rows:
            cells: list[object] = []
            for value in row.values():
                if isinstance(value, list | tuple):
                    cells.extend(value)
                elif isinstance(value, bool):
                    cells.append("true" if value else "false")
                else:
                    cells.append("" if value is None else value)
            if header is None:
                header = [
                    name
                    for name, value in row.items()
                    for name in (
                        [f"{name}@{i}" for i in range(1, len(value) + 1)]
                        if isinstance(value, list | tuple)
                        else [name]
                    )
                ]
                yield line(header)
            yield line(next(iter(safe_rows([cells], raw=raw))))
