"""Shared by the interchange commands: find a study by slug, an owner by username, write to a file or
stdout."""

import codecs
import os
from collections.abc import Iterable
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from studies.models import Study

# What an export command says after writing the panel ids (--include-panel-ids).
PANEL_IDS_WRITTEN = "the output holds the participants' panel ids: keep it in the lab, do not share it"


def study_by_slug(slug: str) -> Study:
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise CommandError(f"no study with slug {slug!r}")
    return study


def user_by_name(username: str):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"no user {username!r}; create the account first (manage.py createsuperuser)")
    return user


def write(command, output: str | None, content: str | bytes) -> None:
    if output in (None, "-"):
        command.stdout.write(content.decode("utf-8") if isinstance(content, bytes) else content, ending="")
        return
    path = Path(output)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    command.stderr.write(f"wrote {path}")


def write_chunks(command, output: str | None, chunks: Iterable[bytes]) -> None:
    """A streamed export (UTF-8 chunks) written as it comes: to stdout, or to a file through a temporary
    name, so an error part-way leaves no file that looks whole."""
    if output in (None, "-"):
        decoder = codecs.getincrementaldecoder("utf-8")()
        for chunk in chunks:
            command.stdout.write(decoder.decode(chunk), ending="")
        command.stdout.write(decoder.decode(b"", final=True), ending="")
        return
    path = Path(output)
    partial = path.with_name(path.name + ".partial")
    try:
        with open(partial, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    command.stderr.write(f"wrote {path}")
