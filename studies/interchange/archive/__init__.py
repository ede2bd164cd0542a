"""A whole study as one JSON archive, and its import into another SessionLab (docs/file-formats.md).

The archive holds the study's settings and grade scale, the collection documents it uses (shown, judged,
in a reference version or a pool), scenarios, systems, participants with their assignments, sessions,
queries, shown results, judgments with their history, the raw event log, reference versions with their
judgments, assessment pools, and the audit trail. Rows refer to each other by codes, positions and document
ids, never by database ids; the raw event payloads keep the ids the exporting server wrote in its answers
(`session`, `query_id`, `open_document_id`), and the import rewrites them to the new rows.

Not carried: accounts (the importing user owns the study; a reference version's creator and a reference
judgment's judge are linked only when the name is the importing user's own, and their names are kept
either way: created_by_name, judged_by_name; a version's provenance is kept marked imported, a claim),
participants' access tokens (new private links are issued: an archive
is not a bearer of old links), and assessors' memberships, judgments and adjudication decisions (they belong
to accounts; the reference versions they produced are carried).

`study_archive_import` copies the file in chunks to a temporary one, reads the JSON a value at a time with
line numbers (the long lists an item at a time), checks every row before and while writing, and runs in one
transaction, within ARCHIVE_MAX_BYTES and ARCHIVE_MAX_DOCUMENT_BYTES: an error names the file, the line of
the object and the field (a JSON path). A reference judgment's source is kept marked as the archive's claim.

The modules: layout (format name, version), export (the writer, section by section), lined_json (a value's
JSON read with lines, unstorable text refused), streamed_json (the archive spooled and read a value at a
time), reader (typed access, the one loop over a listed section),
import_design / import_participants / import_reference (the sections' readers), importer (the whole).
"""

from studies.errors import ExportError
from studies.interchange.archive.export import study_archive, study_archive_json, study_archive_stream
from studies.interchange.archive.importer import stored_timestamps, study_archive_import
from studies.interchange.archive.layout import ACK_IDS, FORMAT, VERSION
from studies.interchange.archive.lined_json import LinedDict, load_json_with_lines, refuse_unstorable_text

__all__ = [
    "ACK_IDS",
    "FORMAT",
    "VERSION",
    "ExportError",
    "LinedDict",
    "load_json_with_lines",
    "refuse_unstorable_text",
    "stored_timestamps",
    "study_archive",
    "study_archive_import",
    "study_archive_json",
    "study_archive_stream",
]
