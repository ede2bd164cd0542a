"""What was on screen and when the participant was away, read back from an archive: a shown
result's `exposure`, a query's `page_exposures` and a session's `attention_spans` (docs/file-formats.md).
Each is optional (an archive written before them has none); a value out of range is refused where it is,
as every other field of the archive."""

from __future__ import annotations

from studies.interchange.archive.layout import EXPOSURE_FIELDS
from studies.interchange.archive.reader import Imported
from studies.models import AttentionSpan, PageExposure, Query, ResultExposure, SearchSession, ShownResult
from studies.participation.events.exposure import ATTENTION_KINDS

# The largest value each figure may take: 1000 for a fraction in thousandths, a column's range otherwise.
# None: never reported on screen / never at least half visible (or an archive written before the figure) /
# never read.
NULLABLE = {"first_visible_ms", "last_visible_ms", "read_permille"}
LIMITS = {
    "first_visible_ms": 2**31 - 1,
    "last_visible_ms": 2**31 - 1,
    "visible_ms": 2**62,
    "max_permille": 1000,
    "hover_ms": 2**62,
    "hovers": 2**31 - 1,
    "read_permille": 1000,
}


def _whole(done: Imported, item, key: str, where: str, limit: int) -> int:
    value = done.r.get(item, key, where, int)
    if isinstance(value, bool) or not 0 <= value <= limit:
        done.r.fail(item, f"{where}.{key}", f"expected a whole number from 0 to {limit}, found {value!r}")
    return value


def exposures_of(done: Imported, shown: list[tuple[ShownResult, dict, str]]) -> list[ResultExposure]:
    """The exposure of each shown result that has one (its `exposure`: null or absent when none)."""
    exposures = []
    for row, item, where in shown:
        exposure = done.r.get(item, "exposure", where, dict, null=True, default=None)
        if exposure is None:
            continue
        here = f"{where}.exposure"
        figures = {
            name: None
            if name in NULLABLE and exposure.get(name) is None
            else _whole(done, exposure, name, here, LIMITS[name])
            for name in EXPOSURE_FIELDS
        }
        exposures.append(ResultExposure(shown_result=row, **figures))
    return exposures


def page_exposures_of(done: Imported, query: Query, q_item, q_where: str) -> list[PageExposure]:
    pages: set[int] = set()
    rows = []
    for item, where in done.r.items(q_item, "page_exposures", q_where, optional=True):
        page = _whole(done, item, "page", where, 32767)
        done.r.once(pages, page, item, f"{where}.page", f"page {page} is listed twice", allowed=page >= 1)
        rows.append(
            PageExposure(
                query=query, page=page, scroll_permille=_whole(done, item, "scroll_permille", where, 1000)
            )
        )
    return rows


def attention_imported(done: Imported, s_item, s_where: str, session: SearchSession) -> None:
    """A session's `attention_spans`: [kind, start_ms, duration_ms] each."""
    spans = done.r.get(s_item, "attention_spans", s_where, list, default=[])
    rows = []
    for i, span in enumerate(spans):
        where = f"{s_where}.attention_spans[{i}]"
        if (
            not isinstance(span, list)
            or len(span) != 3
            or span[0] not in ATTENTION_KINDS
            or not all(type(value) is int and 0 <= value <= 2**62 for value in span[1:])
        ):
            done.r.fail(
                s_item,
                where,
                f"expected [kind, start_ms, duration_ms], kind one of {', '.join(ATTENTION_KINDS)}",
            )
        rows.append(AttentionSpan(session=session, kind=span[0], start_ms=span[1], duration_ms=span[2]))
    AttentionSpan.objects.bulk_create(rows)
