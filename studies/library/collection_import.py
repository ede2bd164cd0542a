"""Importing a document collection (and optionally its topics and graded judgments) into the database.

Parsing (`studies.search.engines.formats`, or the `ir_datasets` package) happens first and reads everything;
only then are the rows written, in one transaction. A malformed file raises `CollectionImportError` whose
message names the file and line, and nothing is written.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from django.db import transaction

from scoring.lib.errors import InputError
from studies.assessment.references import reference_version_create
from studies.design.services import design_check_unlocked
from studies.errors import CollectionImportError, DesignLockedError
from studies.library.collections import collection_create, collection_name_checked
from studies.models import Collection, ReferenceJudgment, ReferenceVersion, Scenario, Study
from studies.search.engines import formats
from studies.search.engines.formats import DEFAULT_CRANFIELD_GRADES, FormatError, ParsedCollection

logger = logging.getLogger(__name__)

FORMATS = ("cranfield", "trec", "jsonl", "ir_datasets")


@dataclass
class ImportResult:
    collection: Collection
    documents: int
    topics: int
    judgments: int
    scenarios: list[Scenario]
    reference_version: ReferenceVersion | None


def parse_grade_map(text: str) -> dict[int, int]:
    """ "1:3,2:2,3:1,4:1,-1:0" -> {1: 3, 2: 2, 3: 1, 4: 1, -1: 0}."""
    mapping: dict[int, int] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        source, sep, target = part.partition(":")
        try:
            if not sep:
                raise ValueError
            key, value = int(source), int(target)
        except ValueError:
            raise CollectionImportError(
                f"grade map entry {part!r} is not of the form CODE:GRADE (e.g. 1:3,2:2,3:1,4:1,-1:0)"
            ) from None
        if key in mapping:
            raise CollectionImportError(f"grade map gives code {key} twice")
        mapping[key] = value
    if not mapping:
        raise CollectionImportError("the grade map is empty")
    return mapping


def _line_of(path: Path, *words: str) -> int | None:
    """The first line of `path` whose whitespace-separated fields contain all `words` (for error messages)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                fields = line.split()
                if all(word in fields for word in words):
                    return number
    except OSError:
        return None
    return None


def _read_qrels(path: Path, grade_map: Mapping[int, int] | None) -> list[formats.Judgment]:
    judgments = formats.judgments_from_qrels(formats.read_qrels(str(path)))
    if grade_map is None:
        return judgments
    mapped = []
    for judgment in judgments:
        if judgment.grade not in grade_map:
            line = _line_of(path, judgment.topic_id, judgment.doc_id)
            raise FormatError(
                str(path),
                line,
                f"grade {judgment.grade} has no entry in the grade map (mapped: {sorted(grade_map)})",
            )
        mapped.append(formats.Judgment(judgment.topic_id, judgment.doc_id, int(grade_map[judgment.grade])))
    return mapped


def read_ir_datasets(dataset_id: str) -> ParsedCollection:
    """Documents, queries and qrels of an `ir_datasets` dataset. Raises CollectionImportError when the package
    is not installed or its source cannot be reached."""
    try:
        import ir_datasets  # optional: not in requirements, needs network access
    except ImportError:
        raise CollectionImportError(
            "--ir-datasets needs the ir_datasets package, which is not installed "
            "(pip install ir_datasets, on a machine that can reach its download sources)"
        ) from None
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise CollectionImportError(f"ir_datasets knows no dataset {dataset_id!r}") from None
    try:
        documents = (
            [
                formats.Document(
                    str(doc.doc_id),
                    str(getattr(doc, "title", "") or ""),
                    str(getattr(doc, "text", "") or getattr(doc, "body", "") or ""),
                )
                for doc in dataset.docs_iter()
            ]
            if dataset.has_docs()
            else []
        )
        topics = (
            [
                formats.Topic(
                    str(q.query_id),
                    str(getattr(q, "title", "") or getattr(q, "text", "")),
                    str(getattr(q, "description", "") or getattr(q, "text", "")),
                )
                for q in dataset.queries_iter()
            ]
            if dataset.has_queries()
            else []
        )
        judgments = (
            [formats.Judgment(str(j.query_id), str(j.doc_id), int(j.relevance)) for j in dataset.qrels_iter()]
            if dataset.has_qrels()
            else []
        )
    except Exception as exc:  # network errors, checksum failures, missing manual downloads
        reason = " ".join(str(exc).split())
        raise CollectionImportError(
            f"ir_datasets could not load {dataset_id!r} (is its source reachable from this machine?): "
            + (reason[:300] + " …" if len(reason) > 300 else reason)
        ) from exc
    if not documents:
        raise CollectionImportError(f"ir_datasets dataset {dataset_id!r} has no documents")
    return ParsedCollection(documents, topics, judgments)


def collection_parse(
    *,
    format: str,
    paths: Sequence[str | Path],
    topics_path: str | Path | None = None,
    qrels_path: str | Path | None = None,
    grade_map: Mapping[int, int] | None = None,
) -> ParsedCollection:
    """Read everything the import needs; raises CollectionImportError ("file:line: reason")."""
    if format not in FORMATS:
        raise CollectionImportError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if not paths:
        raise CollectionImportError("name at least one input (a folder for cranfield, files for trec/jsonl)")
    try:
        if format == "ir_datasets":
            documents, topics, judgments = _read_ir_datasets_input(paths, grade_map)
        elif format == "cranfield":
            documents, topics, judgments = _read_cranfield_input(paths, grade_map)
        else:
            documents, topics, judgments = _read_document_files(format, paths), [], []
        if topics_path is not None:
            topics = formats.read_trec_topics(topics_path)
        if qrels_path is not None:
            judgments = _read_qrels(Path(qrels_path), grade_map)
    except InputError as exc:  # FormatError, and the qrels reader's own InputError (scoring.lib.trec_io)
        raise CollectionImportError(str(exc)) from None
    if not documents:
        raise CollectionImportError(f"{paths[0]}: no documents found")
    _check_judged_documents(documents, judgments, paths, qrels_path)
    return ParsedCollection(documents, topics, judgments)


def _read_ir_datasets_input(paths: Sequence[str | Path], grade_map: Mapping[int, int] | None) -> tuple:
    if len(paths) != 1:
        raise CollectionImportError("give exactly one ir_datasets dataset id")
    parsed = read_ir_datasets(str(paths[0]))
    judgments = parsed.judgments
    if grade_map is not None:
        judgments = [
            formats.Judgment(j.topic_id, j.doc_id, _mapped(grade_map, j.grade, str(paths[0])))
            for j in judgments
        ]
    return parsed.documents, parsed.topics, judgments


def _read_cranfield_input(paths: Sequence[str | Path], grade_map: Mapping[int, int] | None) -> tuple:
    if len(paths) != 1:
        raise CollectionImportError(
            "the cranfield format takes one folder (holding cran.all.1400, cran.qry and cranqrel)"
        )
    folder = Path(paths[0])
    if not folder.is_dir():
        raise CollectionImportError(f"{folder}: not a folder (the cranfield format takes the folder)")
    parsed = formats.read_cranfield(folder, grade_map if grade_map is not None else DEFAULT_CRANFIELD_GRADES)
    return parsed.documents, parsed.topics, parsed.judgments


def _read_document_files(format: str, paths: Sequence[str | Path]) -> list:
    """The documents of trec or jsonl files, an id given twice (in one file or two) refused."""
    reader = formats.read_trec_documents if format == "trec" else formats.read_jsonl_documents
    documents = []
    seen: dict[str, str] = {}
    for path in paths:
        for document in reader(path):
            if document.external_id in seen:
                raise CollectionImportError(
                    f"{path}: document id {document.external_id!r} is also in {seen[document.external_id]}"
                )
            seen[document.external_id] = str(path)
            documents.append(document)
    return documents


def _check_judged_documents(documents, judgments, paths, qrels_path) -> None:
    doc_ids = {d.external_id for d in documents}
    for judgment in judgments:
        if judgment.doc_id not in doc_ids:
            where = str(qrels_path) if qrels_path else str(paths[0])
            line = _line_of(Path(qrels_path), judgment.topic_id, judgment.doc_id) if qrels_path else None
            prefix = f"{where}:{line}" if line else where
            raise CollectionImportError(
                f"{prefix}: judged document {judgment.doc_id!r} is not in the collection"
            )


def _mapped(grade_map: Mapping[int, int], grade: int, source: str) -> int:
    if grade not in grade_map:
        raise CollectionImportError(f"{source}: grade {grade} has no entry in the grade map")
    return int(grade_map[grade])


def collection_import(
    *,
    name: str,
    format: str,
    paths: Sequence[str | Path],
    topics_path: str | Path | None = None,
    qrels_path: str | Path | None = None,
    grade_map: Mapping[int, int] | None = None,
    description: str = "",
    study: Study | None = None,
    scenario_topics: Sequence[str] | None = None,
    created_by=None,
    owner=None,
) -> ImportResult:
    """Parse the input, then write the Collection and its Documents in one transaction.

    With `study`: the study's collection becomes this one (it must have none yet), the topics named in
    `scenario_topics` become its scenarios (code "T<topic>", the topic's title and text), and the judgments
    become a new ReferenceVersion of the study, each grade (after `grade_map`) checked against the study's
    scale. Without `study`, topics and judgments are read and checked but not stored. All or nothing.

    The new collection's owner is the study's owner with `study` (the study is built on it), else `owner`
    (None: "admin only" until a superuser gives it an owner or shares it).
    """
    name = collection_name_checked(name)
    if scenario_topics and study is None:
        raise CollectionImportError("turning topics into scenarios needs a study (--study SLUG)")
    parsed = collection_parse(
        format=format, paths=paths, topics_path=topics_path, qrels_path=qrels_path, grade_map=grade_map
    )
    wanted = _wanted_topics(parsed, scenario_topics)
    source = str(qrels_path or paths[0])
    scenarios: list[Scenario] = []
    version = None
    with transaction.atomic():
        if study is not None:
            study = Study.objects.select_for_update().get(pk=study.pk)
            _check_study(study, parsed, wanted, source)
        collection = collection_create(
            name=name,
            description=description,
            owner=study.owner if study is not None else owner,
            documents=parsed.documents,
        )
        if study is not None:
            scenarios, version = _study_built_on(study, collection, parsed, wanted, source, created_by)
    logger.info(
        "imported collection %r: %d documents, %d topics, %d judgments",
        name,
        len(parsed.documents),
        len(parsed.topics),
        len(parsed.judgments),
    )
    return ImportResult(
        collection, len(parsed.documents), len(parsed.topics), len(parsed.judgments), scenarios, version
    )


def _wanted_topics(parsed: ParsedCollection, scenario_topics: Sequence[str] | None) -> list[str]:
    """The topic ids to turn into scenarios, each one the input holds."""
    topics_by_id = {t.topic_id: t for t in parsed.topics}
    wanted = [str(t).strip() for t in scenario_topics or [] if str(t).strip()]
    for topic_id in wanted:
        if topic_id not in topics_by_id:
            raise CollectionImportError(
                f"topic {topic_id!r} is not among the {len(topics_by_id)} topics read"
                + (f" (e.g. {', '.join(list(topics_by_id)[:5])})" if topics_by_id else "")
            )
    return wanted


def _study_built_on(
    study: Study, collection: Collection, parsed: ParsedCollection, wanted: list[str], source: str, created_by
) -> tuple[list[Scenario], ReferenceVersion | None]:
    """The study searches the new collection: its wanted topics become scenarios and the judgments a new
    reference version (inside the import's transaction)."""
    study.collection = collection
    study.save(update_fields=["collection"])
    topics_by_id = {t.topic_id: t for t in parsed.topics}
    scenarios = []
    for topic_id in wanted:
        topic = topics_by_id[topic_id]
        scenarios.append(
            Scenario.objects.create(
                study=study,
                code=f"T{topic_id}"[:40],
                title=(topic.title or f"Topic {topic_id}")[:200],
                text=topic.text or topic.title,
                topic_id=topic_id,
            )
        )
    if not parsed.judgments:
        return scenarios, None
    doc_pk = dict(collection.documents.values_list("external_id", "pk"))
    version = reference_version_create(
        study=study,
        created_by=created_by,
        # The file's name only: the server's folders are not shown (the note reaches the API and archives).
        note=f"imported with collection {collection.name!r} from {Path(source).name}",
        judgments=(
            ReferenceJudgment(
                topic_id=j.topic_id,
                document_id=doc_pk[j.doc_id],
                grade=j.grade,
                source=Path(source).name[:200],
            )
            for j in parsed.judgments
        ),
    )
    return scenarios, version


def _check_study(study: Study, parsed: ParsedCollection, wanted: list[str], source: str) -> None:
    if study.collection_id is not None:
        raise CollectionImportError(
            f"study {study.slug!r} already searches collection {cast(Collection, study.collection).name!r}; "
            "a study has one collection"
        )
    if wanted:
        try:
            design_check_unlocked(study=study)
        except DesignLockedError as error:
            raise CollectionImportError(str(error)) from None
    taken = set(study.scenarios.values_list("topic_id", flat=True))
    codes = set(study.scenarios.values_list("code", flat=True))
    for topic_id in wanted:
        if topic_id in taken or f"T{topic_id}" in codes:
            raise CollectionImportError(f"study {study.slug!r} already has a scenario for topic {topic_id!r}")
    scale = set(study.grade_values())
    for judgment in parsed.judgments:
        if judgment.grade not in scale:
            raise CollectionImportError(
                f"{source}: topic {judgment.topic_id} document {judgment.doc_id} "
                f"maps to grade {judgment.grade}, "
                f"which is not in the study's scale {sorted(scale)}; pass a --grade-map onto that scale"
            )
