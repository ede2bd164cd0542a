"""Collections from the browser: an upload is stored, then read, imported and indexed by a Celery task that
reports its progress on the CollectionUpload row (docs/setting-up-a-study.md).

The reading is `studies.library.collection_import.collection_parse` (the readers of
`studies.search.engines.formats`): every file is read and checked before a row is written, and the rows are
written in one transaction, so an upload imports all or nothing. Errors name the researcher's file (and the
member of a zip) and the line, never a path of this server.
"""

from __future__ import annotations

import logging
import shutil
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import cast

from django.conf import settings
from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone

from studies.assessment.collection_reference import reference_version_from_collection
from studies.design.services import (
    collection_check_usable,
    collection_may_share,
    design_check_unlocked,
    study_create,
)
from studies.errors import CollectionAccessError, CollectionImportError, DesignError
from studies.library.collection_import import collection_parse
from studies.library.collections import collection_create, collection_name_checked
from studies.library.storage import upload_discarded, upload_fetched, upload_stored
from studies.library.storage import upload_root as upload_root  # the tests' and tools' old address
from studies.library.sweep import IN_PROGRESS
from studies.models import (
    Collection,
    CollectionJudgment,
    CollectionTopic,
    CollectionUpload,
    ReferenceVersion,
    Study,
)
from studies.search.engines.search import CONFIGURATIONS
from studies.search.systems import collection_index_build

logger = logging.getLogger(__name__)

MiB = 1024 * 1024
# One uploaded file (Cranfield's zip is 0.7 MB, its folder 1.7 MB); a zip's members together, unpacked (a zip
# bomb stops here, before it fills the disk); members of one zip.
MAX_UPLOAD_BYTES = 64 * MiB
MAX_UNZIPPED_BYTES = 256 * MiB
MAX_ZIP_MEMBERS = 2000
FILE_ROLES = ("documents", "topics", "qrels")


def _safe_name(name: str) -> str:
    """The last part of an uploaded file's name, without anything a path could make of it."""
    base = PurePosixPath(str(name).replace("\\", "/")).name.strip().lstrip(".")
    cleaned = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in base)[:100]
    while len(cleaned.encode()) > 200:  # letters of other scripts take up to 4 bytes: a name the disk holds
        cleaned = cleaned[:-1]
    return cleaned or "upload"


def upload_create(*, owner, name: str, format: str, files: dict, description: str = "") -> CollectionUpload:
    """Store an upload's files (the caller queues `collection_upload_process_task` on commit). `files` maps a
    role (documents, topics, qrels) to an uploaded file (Django's UploadedFile; None or absent: not given).
    Refuses, naming the file, what cannot be right whatever its content: a size over MAX_UPLOAD_BYTES, a
    Cranfield upload that is not a zip."""
    name = collection_name_checked(name)
    if format not in dict(CollectionUpload.FORMATS):
        raise CollectionImportError(
            f"unknown format {format!r}; expected one of {', '.join(dict(CollectionUpload.FORMATS))}"
        )
    given = {role: upload for role, upload in files.items() if upload is not None and role in FILE_ROLES}
    if "documents" not in given:
        raise CollectionImportError("choose the documents file (or the Cranfield zip)")
    for upload in given.values():
        if upload.size > MAX_UPLOAD_BYTES:
            raise CollectionImportError(
                f"{upload.name}: {upload.size / MiB:.1f} MB, more than the "
                f"{MAX_UPLOAD_BYTES // MiB} MB an upload may have"
            )
        if upload.size == 0:
            raise CollectionImportError(f"{upload.name}: the file is empty")
    if format == "cranfield" and not given["documents"].name.lower().endswith(".zip"):
        raise CollectionImportError(
            f"{given['documents'].name}: a Cranfield collection is uploaded as a zip of "
            "its folder (cran.all.1400, cran.qry, cranqrel)"
        )
    with transaction.atomic():
        upload = CollectionUpload.objects.create(
            owner=owner,
            name=name,
            description=description,
            format=format,
            files={role: _safe_name(f.name) for role, f in given.items()},
            stage=CollectionUpload.Status.QUEUED.label,
        )
        upload_stored(upload, given)
    return upload


# A name the filesystem can hold: each part at most NAME_MAX bytes (255 on Linux's filesystems), the whole
# path well under PATH_MAX with the upload's folder in front.
MAX_MEMBER_PART_BYTES = 255
MAX_MEMBER_PATH_BYTES = 1024


def _member_parts(member: zipfile.ZipInfo, label: str) -> tuple[str, ...]:
    """The member's path inside the upload's folder, as parts; CollectionImportError naming the member and
    its problem when it could escape the folder, is a link, or is a name the filesystem cannot hold."""
    name = member.filename
    shown = name if len(name) <= 80 else f"{name[:60]}…"

    def refuse(problem: str) -> CollectionImportError:
        return CollectionImportError(f"{label}: member {shown!r} {problem}")

    parts = PurePosixPath(name.replace("\\", "/")).parts
    if name.startswith(("/", "\\")) or ".." in parts or not parts or ":" in parts[0]:
        raise refuse("would be written outside the upload's folder")
    if (member.external_attr >> 16) & 0o170000 == 0o120000:
        raise refuse("is a symbolic link")
    if member.flag_bits & 0x1:
        raise refuse("is encrypted")
    if "\x00" in name:
        raise refuse("has a NUL character in its name")
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_MEMBER_PART_BYTES for part in parts):
        raise refuse(f"has a name longer than the {MAX_MEMBER_PART_BYTES} bytes a file's name may have")
    if len(name.encode("utf-8", "surrogateescape")) > MAX_MEMBER_PATH_BYTES:
        raise refuse(f"has a path longer than {MAX_MEMBER_PATH_BYTES} bytes")
    return parts


def _members_checked(zipped: zipfile.ZipFile, label: str) -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    """Every member to unpack with its path, each checked before anything is written: a problem with any one
    (its name, a second member of the same name, a file and a folder of one name, too many, too large)
    refuses the zip naming the member."""
    members = [
        m
        for m in zipped.infolist()
        if not m.is_dir()
        and not m.filename.startswith("__MACOSX/")
        and not PurePosixPath(m.filename).name.startswith(".")
    ]
    if len(members) > MAX_ZIP_MEMBERS:
        raise CollectionImportError(
            f"{label}: {len(members)} files, more than the {MAX_ZIP_MEMBERS} a zip may hold"
        )
    if sum(m.file_size for m in members) > MAX_UNZIPPED_BYTES:
        raise CollectionImportError(f"{label}: more than {MAX_UNZIPPED_BYTES // MiB} MB once unpacked")
    checked: list[tuple[zipfile.ZipInfo, tuple[str, ...]]] = []
    files: dict[tuple[str, ...], str] = {}  # path -> the member's name, as the zip gives it
    folders: dict[tuple[str, ...], str] = {}  # a folder some member puts -> the first such member
    for member in members:
        parts = _member_parts(member, label)
        if parts in files:
            raise CollectionImportError(f"{label}: member {member.filename!r} is in the zip twice")
        files[parts] = member.filename
        for depth in range(1, len(parts)):
            folders.setdefault(parts[:depth], member.filename)
        checked.append((member, parts))
    for parts, name in files.items():
        if parts in folders:
            raise CollectionImportError(
                f"{label}: member {name!r} is a file, and {folders[parts]!r} puts a folder of the same name"
            )
    return checked


def _member_write(zipped: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path, label: str) -> None:
    written = 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipped.open(member) as source, open(path, "xb") as handle:
            while chunk := source.read(1024 * 1024):
                written += len(chunk)
                if written > member.file_size or written > MAX_UNZIPPED_BYTES:
                    raise CollectionImportError(
                        f"{label}: member {member.filename!r} unpacks to more than its stated size"
                    )
                handle.write(chunk)
    except OSError as exc:  # what the checks did not foresee: named, never a traceback
        raise CollectionImportError(
            f"{label}: member {member.filename!r} cannot be written ({exc.strerror or exc})"
        ) from None


def _unzip(archive: Path, target: Path) -> list[Path]:
    """Extract `archive` into `target`, refusing what could escape it, fill the disk or not be written; the
    members are checked before the first is written, and a refusal leaves nothing of the zip on disk.
    Returns the files."""
    label = archive.name
    extracted = []
    try:
        with zipfile.ZipFile(archive) as zipped:
            for member, parts in _members_checked(zipped, label):
                path = target.joinpath(*parts)
                _member_write(zipped, member, path, label)
                extracted.append(path)
    except CollectionImportError:
        shutil.rmtree(target, ignore_errors=True)
        raise
    except zipfile.BadZipFile:
        shutil.rmtree(target, ignore_errors=True)
        raise CollectionImportError(f"{label}: not a zip file") from None
    except UnicodeDecodeError:  # a member name flagged UTF-8 that is not
        shutil.rmtree(target, ignore_errors=True)
        raise CollectionImportError(f"{label}: a member's name is not valid UTF-8") from None
    except (zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, zlib.error) as exc:
        shutil.rmtree(target, ignore_errors=True)  # unknown compression, a damaged member
        raise CollectionImportError(f"{label}: cannot be unpacked ({exc})") from None
    if not extracted:
        raise CollectionImportError(f"{label}: the zip holds no files")
    return sorted(extracted)


def _inputs(upload: CollectionUpload, folder: Path) -> tuple[list[Path], Path | None, Path | None, dict]:
    """The paths collection_parse reads, and {server path prefix: what the researcher calls it}."""
    names: dict[str, str] = {}
    documents = folder / "documents" / upload.files["documents"]
    paths: list[Path]
    if documents.name.lower().endswith(".zip"):
        unpacked = folder / "unpacked"
        files = _unzip(documents, unpacked)
        names[f"{unpacked}/"] = f"{upload.files['documents']} › "
        if upload.format == "cranfield":
            holders = sorted({f.parent for f in files if f.name == "cran.all.1400"})
            if not holders:
                raise CollectionImportError(
                    f"{upload.files['documents']}: no cran.all.1400 in the zip (a Cranfield "
                    "folder holds cran.all.1400, cran.qry and cranqrel)"
                )
            paths = [holders[0]]
        else:
            paths = files
    else:
        paths = [documents]
        names[f"{documents.parent}/"] = ""
    topics = qrels = None
    if "topics" in upload.files:
        topics = folder / "topics" / upload.files["topics"]
        names[f"{topics.parent}/"] = ""
    if "qrels" in upload.files:
        qrels = folder / "qrels" / upload.files["qrels"]
        names[f"{qrels.parent}/"] = ""
    names[f"{folder}/"] = ""
    return paths, topics, qrels, names


def _researchers_words(message: str, names: dict[str, str]) -> str:
    for prefix, shown in sorted(names.items(), key=lambda item: -len(item[0])):
        message = message.replace(prefix, shown)
    return message


def _check_topic_ids(parsed) -> None:
    """A topic id the column cannot hold is refused by name (PostgreSQL would refuse the whole import with an
    error naming no topic; SQLite would store it). The documents are checked by `collection_create`."""
    for topic in parsed.topics:
        if len(topic.topic_id) > 100:
            raise CollectionImportError(f"topic id {topic.topic_id[:40]!r}… is longer than 100 characters")


def _report(upload_id: int, status: str, progress: int, stage: str = "", error: str = "", **fields) -> None:
    """Progress on the upload's row, stamped: the stale-upload sweep (studies/library/sweep.py) fails an
    upload whose row has not moved for a while. Only an upload still in progress takes it, so a worker the
    sweep gave up on (slow, not dead) cannot turn its failure back into progress."""
    CollectionUpload.objects.filter(pk=upload_id, status__in=IN_PROGRESS).update(
        status=status, progress=progress, stage=stage[:300], error=error, updated_at=timezone.now(), **fields
    )


def upload_not_queued(*, upload_id: int) -> None:
    """The task could not be queued (the broker is unreachable): the upload ends as failed, saying why, rather
    than waiting for ever; its files are removed."""
    claimed = CollectionUpload.objects.filter(pk=upload_id, status=CollectionUpload.Status.QUEUED).update(
        status=CollectionUpload.Status.FAILED,
        progress=100,
        stage="Nothing was imported",
        error="The task queue could not be reached; nothing was imported. "
        "Upload the files again in a moment.",
        updated_at=timezone.now(),
    )
    if claimed:
        upload_discarded(upload_id)


def upload_process(*, upload_id: int) -> CollectionUpload:
    """Fetch, read, import and index one upload (the Celery task's body). Claims the upload with a conditional
    UPDATE, so a second delivery of the task does nothing; a refusal ends the upload as failed, with the
    reason, and writes no collection. Whatever the outcome, the fetched copy and the stored files go."""
    Status = CollectionUpload.Status
    claimed = CollectionUpload.objects.filter(pk=upload_id, status=Status.QUEUED).update(
        status=Status.READING, progress=5, stage=Status.READING.label, updated_at=timezone.now()
    )
    upload = CollectionUpload.objects.get(pk=upload_id)
    if not claimed:
        return upload
    step = "fetching the files from the upload storage"
    work: Path | None = None
    collection: Collection | None = None
    names: dict[str, str] = {}
    try:
        work = upload_fetched(upload)
        step = "reading the files"
        paths, topics_path, qrels_path, names = _inputs(upload, work)
        parsed = collection_parse(
            format=upload.format, paths=paths, topics_path=topics_path, qrels_path=qrels_path
        )
        _check_topic_ids(parsed)
        step = "storing the collection"
        _report(
            upload_id,
            Status.WRITING,
            30,
            f"Storing {len(parsed.documents)} documents, {len(parsed.topics)} topics, "
            f"{len(parsed.judgments)} judgments",
        )
        collection = _collection_written(upload, parsed)
        step = "building the search indexes"
        if _indexes_built(upload_id, collection):
            _report(
                upload_id,
                Status.DONE,
                100,
                f"{len(parsed.documents)} documents, {len(parsed.topics)} topics, "
                f"{len(parsed.judgments)} judgments",
            )
            logger.info("upload %s imported as collection %s", upload_id, collection.pk)
    except CollectionImportError as exc:
        _report(upload_id, Status.FAILED, 100, "Nothing was imported", _researchers_words(str(exc), names))
    except Exception:
        # A bug, not the researcher's files: the upload ends as failed (not "reading" for ever), naming the
        # step; the log has the traceback.
        logger.exception("upload %s failed unexpectedly while %s", upload_id, step)
        _report(
            upload_id,
            Status.FAILED,
            100,
            "Nothing was imported" if collection is None else "The documents are stored; the indexes are not",
            f"An unexpected error stopped the import while {step}; the administrators' log has the details.",
        )
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        upload_discarded(upload_id)
    return CollectionUpload.objects.get(pk=upload_id)


@transaction.atomic
def _collection_written(upload: CollectionUpload, parsed) -> Collection:
    """The parsed upload as a collection with its documents, topics and judgments, all or nothing."""
    # The upload's row stays locked (PostgreSQL) until the documents are committed: the stale-upload sweep
    # waits, then finds it fresh. An upload the sweep already failed is not written behind its back.
    if not CollectionUpload.objects.filter(pk=upload.pk, status=CollectionUpload.Status.WRITING).update(
        updated_at=timezone.now()
    ):
        raise CollectionImportError("the upload was ended while it waited; nothing was imported")
    collection = collection_create(
        name=upload.name, description=upload.description, owner=upload.owner, documents=parsed.documents
    )
    CollectionTopic.objects.bulk_create(
        CollectionTopic(
            collection=collection,
            topic_id=t.topic_id,
            title=t.title,
            description=t.text if t.text != t.title else "",
            narrative=str(t.extra.get("narrative", "")),
        )
        for t in parsed.topics
    )
    doc_pk = dict(collection.documents.values_list("external_id", "pk"))
    CollectionJudgment.objects.bulk_create(
        (
            CollectionJudgment(
                collection=collection,
                topic_id=j.topic_id,
                document_id=doc_pk[j.doc_id],
                grade=j.grade,
            )
            for j in parsed.judgments
        ),
        batch_size=1000,
    )
    return collection


def _indexes_built(upload_id: int, collection: Collection) -> bool:
    """Build every search index of the new collection, reporting progress; False (the upload failed, the
    documents stay) when one cannot be built."""
    Status = CollectionUpload.Status
    _report(upload_id, Status.INDEXING, 60, "Building the search indexes", collection=collection)
    configurations = list(CONFIGURATIONS)
    for done, configuration in enumerate(configurations):
        _report(
            upload_id,
            Status.INDEXING,
            60 + 40 * done // len(configurations),
            f"Building the index {configuration} ({done + 1} of {len(configurations)})",
        )
        try:
            collection_index_build(collection=collection, configuration=configuration)
        except (OSError, ValueError) as exc:
            logger.exception("indexing collection %s failed", collection.pk)
            _report(
                upload_id,
                Status.FAILED,
                100,
                "The documents are stored; an index could not be built",
                f"building the index {configuration} failed: {exc}. Rebuild it with manage.py build_index.",
            )
            return False
    return True


def collection_delete(*, collection: Collection, by) -> None:
    """Delete a collection no study uses, with its documents and indexes; its owner or a superuser may."""
    if not collection_may_share(by, collection):
        raise CollectionAccessError(
            f"only the owner of collection {collection.name!r} (or a superuser) deletes it"
        )
    studies = list(Study.objects.filter(collection=collection).values_list("name", flat=True)[:5])
    if studies:
        raise CollectionAccessError(
            f"collection {collection.name!r} is used by the study "
            f"{', '.join(repr(s) for s in studies)}; delete or detach the study first"
        )
    pk = collection.pk
    try:
        with transaction.atomic():
            collection.delete()
    except ProtectedError:
        raise CollectionAccessError(
            f"collection {collection.name!r} holds documents that studies' reference "
            "judgments or logs point to; it cannot be deleted"
        ) from None
    shutil.rmtree(Path(settings.INDEX_ROOT) / f"collection-{pk}", ignore_errors=True)


@transaction.atomic
def study_create_on_collection(*, owner, collection: Collection | None = None, **fields) -> Study:
    """A new study (studies.design.services.study_create: `fields` are its arguments), built on `collection`
    when one is given, whose judgments become its first reference version (the New-study form and the REST
    API; the form's studies once had none)."""
    study = study_create(owner=owner, collection=collection, **fields)
    if collection is not None:
        reference_version_from_collection(study=study, by=owner)
    return study


@transaction.atomic
def study_collection_attach(*, study: Study, collection: Collection, by) -> ReferenceVersion | None:
    """Build `study` on `collection` (before the first enrolment). The collection's judgments whose grades
    fit the study's scale become a reference version of the study (reference_version_from_collection: the
    first when it has none yet); returns the version made, if any."""
    collection_check_usable(user=by, collection=collection)
    design_check_unlocked(study=study)
    study = Study.objects.select_for_update().get(pk=study.pk)
    if study.collection_id == collection.pk:
        return None
    if study.collection_id is not None and study.scenarios.exists():
        raise DesignError(
            f"study {study.slug!r} already searches {cast(Collection, study.collection).name!r} and has "
            "scenarios on its topics; remove them before changing the collection"
        )
    study.collection = collection
    study.save(update_fields=["collection"])
    made = reference_version_from_collection(study=study, by=by)
    return made.version if made.created else None
