"""The export commands write a streamed export as it comes, through a temporary name: an error part-way
leaves neither the file nor the temporary one, and a whole stream is the file."""

import io

import pytest
from django.core.management.base import BaseCommand

from studies.interchange.command_helpers import write_chunks


def _command() -> BaseCommand:
    return BaseCommand(stdout=io.StringIO(), stderr=io.StringIO())


def test_an_error_part_way_leaves_no_file(tmp_path):
    def chunks():
        yield b'{"format": '
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError):
        write_chunks(_command(), str(tmp_path / "study.json"), chunks())
    assert list(tmp_path.iterdir()) == []


def test_a_whole_stream_is_the_file_and_stdout_gets_whole_characters(tmp_path):
    text = "Järvelin ✓ " * 3
    data = text.encode("utf-8")
    pieces = [data[i : i + 1] for i in range(len(data))]  # split inside each multi-byte character
    write_chunks(_command(), str(tmp_path / "log.xml"), iter(pieces))
    assert (tmp_path / "log.xml").read_bytes() == data and [p.name for p in tmp_path.iterdir()] == ["log.xml"]
    command = _command()
    write_chunks(command, None, iter(pieces))
    assert command.stdout.getvalue() == text
