"""Where a browser upload waits for the worker: a Django storage every node reaches (docs/deploying.md,
"Shared storage for uploads").

The web node saves the files through `upload_storage()`; the worker, perhaps on another host, fetches them
into a private temporary folder of its own, reads them there, and both the folder and the stored files are
removed when the task ends, whatever its outcome. With no `collection_uploads` entry in STORAGES
(UPLOAD_STORAGE_URL unset) the storage is a FileSystemStorage under `upload_root()`: right on one machine.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.files.storage import FileSystemStorage, Storage, storages

from studies.errors import CollectionImportError
from studies.models import CollectionUpload

logger = logging.getLogger(__name__)

UPLOAD_STORAGE_ALIAS = "collection_uploads"
COPY_CHUNK_BYTES = 1024 * 1024


def upload_root() -> Path:
    """This node's folder for uploads: the default storage's place, and where the worker unpacks."""
    return Path(getattr(settings, "COLLECTION_UPLOAD_ROOT", Path(settings.INDEX_ROOT) / "_uploads"))


def upload_storage() -> Storage:
    if UPLOAD_STORAGE_ALIAS in settings.STORAGES:
        return storages[UPLOAD_STORAGE_ALIAS]
    return FileSystemStorage(location=upload_root())


def _prefix(upload_id: int) -> str:
    return f"upload-{upload_id}"


def _key(upload_id: int, role: str, name: str) -> str:
    return f"{_prefix(upload_id)}/{role}/{name}"


def upload_stored(upload: CollectionUpload, given: dict) -> None:
    """Save each uploaded file (role -> Django UploadedFile) under the upload's keys. A storage that refuses
    (unreachable, full) is the researcher's refusal, naming the stage; what was saved is removed."""
    storage = upload_storage()
    try:
        for role, uploaded in given.items():
            key = _key(upload.pk, role, upload.files[role])
            if storage.exists(key):  # left by a database that was reset: never a renamed copy
                storage.delete(key)
            uploaded.seek(0)
            storage.save(key, uploaded)
    except Exception:
        logger.exception("upload %s: saving the files to the upload storage failed", upload.pk)
        upload_discarded(upload.pk)
        raise CollectionImportError(
            "the files could not be saved to the upload storage; nothing was kept. Try again in a moment."
        ) from None


def upload_fetched(upload: CollectionUpload) -> Path:
    """The upload's files copied from the storage into a new private folder under this node's upload root
    (the caller removes it): folder/role/name."""
    root = upload_root()
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"work-{upload.pk}-", dir=root))
    storage = upload_storage()
    try:
        for role, name in upload.files.items():
            target = work / role / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with storage.open(_key(upload.pk, role, name), "rb") as source, open(target, "wb") as copy:
                shutil.copyfileobj(source, copy, COPY_CHUNK_BYTES)
    except Exception:
        logger.exception("upload %s: fetching the files from the upload storage failed", upload.pk)
        shutil.rmtree(work, ignore_errors=True)
        raise CollectionImportError(
            "the uploaded files could not be fetched from the upload storage; nothing was imported. "
            "Upload the files again."
        ) from None
    return work


def _stored_keys(storage: Storage, folder: str) -> list[str]:
    try:
        folders, files = storage.listdir(folder)
    except FileNotFoundError:
        return []
    keys = [f"{folder}/{name}" for name in files]
    for sub in folders:
        keys += _stored_keys(storage, f"{folder}/{sub}")
    return keys


def upload_discarded(upload_id: int) -> None:
    """Remove every stored file of the upload (and, on a filesystem, its folders). Logged, never raised: the
    upload's outcome is already decided."""
    storage = upload_storage()
    try:
        for key in _stored_keys(storage, _prefix(upload_id)):
            storage.delete(key)
        if isinstance(storage, FileSystemStorage):
            shutil.rmtree(storage.path(_prefix(upload_id)), ignore_errors=True)
    except Exception:
        logger.exception("upload %s: removing its stored files failed; remove them by hand", upload_id)
