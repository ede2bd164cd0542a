"""Search indexes as a cache of the database (docs/collections-and-systems.md, docs/deploying.md).

The database says which version of each (collection, configuration) index is current (IndexVersion); each
node's INDEX_ROOT holds its own copy, stamped with the number it was built from. A node whose copy is missing
or of another number builds its own from the database, once per node: under a file lock beside the index
(two processes of one node wait for each other; the second finds the copy current and builds nothing), into a
temporary folder moved into place when complete (engines/search.py). A participant's search never waits for
it: on a miss it answers "retry later" and the build runs in a background thread of the process that saw the
miss (a Celery worker on another host would build that host's copy, not this one's).
"""

from __future__ import annotations

import fcntl
import logging
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from sessionlab.rounds import values_by_pk
from studies.models import Collection, IndexVersion
from studies.search.engines.formats import Document as ParsedDocument
from studies.search.engines.search import (
    META_FILE,
    IndexMismatchError,
    build_index,
    get_config,
    read_index_meta,
)

logger = logging.getLogger(__name__)

CURRENT, STALE, MISSING = "current", "stale", "missing"

_building: set[tuple[int, str]] = set()  # the builds this process's background threads are running
_failed_at: dict[tuple[int, str], float] = {}  # when a background build last failed (time.monotonic)
_building_lock = threading.Lock()
# A build that failed (a broken collection, a full disk) is not started again by every search that misses:
# at most once in this many seconds per process.
RETRY_FAILED_BUILD_AFTER = 60.0


@dataclass(frozen=True)
class IndexState:
    """An index as the cluster and this node see it."""

    version: int | None  # the database's current number; None: no build was ever recorded
    documents: int | None  # documents in the current version as built somewhere; None: built nowhere yet
    here: str  # this node's copy: CURRENT, STALE (another number) or MISSING


def collection_index_dir(*, collection_id: int, configuration: str) -> Path:
    """One folder per (collection, configuration) under settings.INDEX_ROOT."""
    get_config(configuration)  # refuses unknown names
    return Path(settings.INDEX_ROOT) / f"collection-{collection_id}" / configuration


def index_version_current(*, collection_id: int, configuration: str) -> IndexVersion | None:
    return IndexVersion.objects.filter(collection_id=collection_id, configuration=configuration).first()


def local_state(index_dir: Path, current: IndexVersion | None) -> str:
    """This node's copy against the database's version. With no version recorded yet (an index built before
    versions existed, or copied in by hand) any copy is used: the next explicit build records one."""
    return local_state_of(index_dir, None if current is None else current.number)


def local_state_of(index_dir: Path, number: int | None) -> str:
    """local_state against the database's current number (None: none recorded). The copy's stamp is read from
    its file once per change of the file (its inode, size and time), not at every search."""
    try:
        meta = _meta_cached(index_dir)
    except IndexMismatchError:
        return MISSING
    if number is None or meta.get("version") == number:
        return CURRENT
    return STALE


_metas: dict[str, tuple[tuple, dict]] = {}  # index folder -> (its stamp file's stat, what it holds)


def _meta_cached(index_dir: Path) -> dict:
    """read_index_meta, kept per process while the file is the same one (a build moves a new folder into
    place: another inode; a rewrite changes its time or size)."""
    key = str(index_dir)
    try:
        stat = (Path(index_dir) / META_FILE).stat()
    except OSError:
        return read_index_meta(index_dir)  # says what is missing, as before
    stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
    cached = _metas.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    meta = read_index_meta(index_dir)
    _metas[key] = (stamp, meta)
    return meta


def versions_parse(text: str | None) -> dict[str, int]:
    """The current numbers of a collection's indexes as statements.sessions_locked joins them
    ("configuration=number,..."): configuration -> number."""
    out = {}
    for item in (text or "").split(","):
        configuration, _, number = item.rpartition("=")
        if configuration and number.isdigit():
            out[configuration] = int(number)
    return out


def index_state(*, collection_id: int, configuration: str) -> IndexState:
    current = index_version_current(collection_id=collection_id, configuration=configuration)
    index_dir = collection_index_dir(collection_id=collection_id, configuration=configuration)
    here = local_state(index_dir, current)
    if current is not None:
        return IndexState(current.number, current.documents, here)
    documents = read_index_meta(index_dir).get("documents") if here == CURRENT else None
    return IndexState(None, documents, here)


def node_index_summary() -> dict[str, int]:
    """How many of the database's current index versions this node holds current, stale or missing (the
    readiness probe's information: a node that misses some builds them on the first search)."""
    counts = {CURRENT: 0, STALE: 0, MISSING: 0}
    for version in IndexVersion.objects.all():
        index_dir = Path(settings.INDEX_ROOT) / f"collection-{version.collection_id}" / version.configuration
        counts[local_state(index_dir, version)] += 1
    return counts


def index_health_check() -> dict:
    """The readiness report's search_indexes entry (registered in studies/apps.py): whether INDEX_ROOT is
    there, and node_index_summary's counts."""
    return {
        "index_root": "present" if Path(settings.INDEX_ROOT).is_dir() else "missing",
        **node_index_summary(),
    }


def index_version_bump(*, collection_id: int, configuration: str) -> int:
    """A new current version (the collection or how it is indexed changed): every node's copy is stale."""
    with transaction.atomic():
        row, created = IndexVersion.objects.select_for_update().get_or_create(
            collection_id=collection_id, configuration=configuration
        )
        if not created:
            row.number += 1
            row.documents, row.built_at, row.built_on = None, None, ""
            row.save(update_fields=["number", "documents", "built_at", "built_on"])
    return row.number


def index_build_here(*, collection_id: int, configuration: str) -> int:
    """Make this node's copy current (building it from the database when it is not); returns its number of
    documents. Under the node's lock, so a second caller waits and then finds the copy current."""
    index_dir = collection_index_dir(collection_id=collection_id, configuration=configuration)
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(index_dir.parent / f"{configuration}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        row, _ = IndexVersion.objects.get_or_create(collection_id=collection_id, configuration=configuration)
        if local_state(index_dir, row) == CURRENT:
            return read_index_meta(index_dir)["documents"]
        documents = (  # 2,000 documents a query, whether or not the database streams (sessionlab/rounds.py)
            ParsedDocument(external_id, title, text)
            for external_id, title, text in values_by_pk(
                Collection(pk=collection_id).documents.all(), ("external_id", "title", "text"), 2000
            )
        )
        count = build_index(documents, index_dir, configuration, version=row.number)
    IndexVersion.objects.filter(pk=row.pk, number=row.number, documents=None).update(
        documents=count, built_at=timezone.now(), built_on=socket.gethostname()[:200]
    )
    logger.info("built index %s version %d (%d documents)", index_dir, row.number, count)
    return count


def index_build_soon(*, collection_id: int, configuration: str) -> bool:
    """Start this node's build in a background thread, unless one runs already in this process, one failed
    less than RETRY_FAILED_BUILD_AFTER seconds ago, or settings.INDEX_BUILD_ON_MISS is off; True when a
    thread was started."""
    key = (collection_id, configuration)
    if not settings.INDEX_BUILD_ON_MISS:
        return False
    with _building_lock:
        failed = _failed_at.get(key)
        if key in _building or (failed is not None and time.monotonic() - failed < RETRY_FAILED_BUILD_AFTER):
            return False
        _building.add(key)
    threading.Thread(target=_build_in_background, args=key, name=f"index-build-{key}", daemon=True).start()
    return True


def _build_in_background(collection_id: int, configuration: str) -> None:
    close_old_connections()
    try:
        index_build_here(collection_id=collection_id, configuration=configuration)
        _failed_at.pop((collection_id, configuration), None)
    except Exception:  # noqa: BLE001 (a thread has nobody to raise to: a later search tries again)
        logger.exception("building index %s of collection %s failed", configuration, collection_id)
        _failed_at[(collection_id, configuration)] = time.monotonic()
    finally:
        with _building_lock:
            _building.discard((collection_id, configuration))
        connections.close_all()
