"""A study's reference judgments (the expert's grades that score its sessions), in numbered versions: an
import or an adjudication makes a new version, and scoring runs record the version they used."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from sessionlab.plurals import counted
from studies.models.core import Document, Study

# A reference judgment may carry a negative grade as judged (TREC's -2, spam): not a step of the study's scale
# (participants never give one), but kept for the scoring formulations, each of which has its own rule for it
# (docs/scoring-sessions.md). The reference_grade_in_scale trigger (migrations 0002, 0006) enforces the same.
NEGATIVE_REFERENCE_GRADES = range(-9, 0)


def reference_grade_allowed(grade: int, scale) -> bool:
    """Whether a reference judgment may carry `grade`: a step of the study's scale, or negative (-9..-1)."""
    return grade in scale or grade in NEGATIVE_REFERENCE_GRADES


# The rules by which a machine assessor's grades enter a version (studies/assessment/machine.py), as its
# provenance names them.
FILL_UNJUDGED = "fill_unjudged"
BREAK_TIES = "break_ties"


def collection_reference_note(name: str) -> str:
    """The note of a version made from a collection's judgments (studies/assessment/collection_reference.py);
    the versions made before their provenance named the collection are known by it."""
    return f"the judgments of collection {name!r}"


# A provenance key set by the archive import: the rest is what another server claims of how the
# version was made (model, host, prompt hash), shown as "imported (claimed)", never as this server's record.
IMPORTED = "imported"
# The same mark on a reference judgment's source (who or what judged it): an archive's word for it, kept in
# the text so that it shows, is exported again and is copied into later versions with it, and so that a
# claimed "machine ..." source is not counted as this server's machine grades (studies/assessment/machine.py).
IMPORTED_SOURCE = "imported (claimed): "
SOURCE_MAX_LENGTH = 200


def claimed_source(source: str) -> str:
    """An archive's judgment source marked as its claim (once: a source already marked keeps its one mark),
    cut to the column."""
    marked = source if source.startswith(IMPORTED_SOURCE) else IMPORTED_SOURCE + source
    return marked[:SOURCE_MAX_LENGTH]


def provenance_words(facts: dict) -> str:
    """A version's provenance in words, for the version lists ("" when none was recorded); an imported one
    reads "imported (claimed): ..."."""
    if not facts:
        return ""
    if facts.get(IMPORTED) is True:
        claimed = {key: value for key, value in facts.items() if key != IMPORTED}
        return "imported (claimed)" + (f": {provenance_words(claimed)}" if claimed else "")
    if "collection" in facts:
        kept = (
            f", with the {counted(facts.get('kept', 0), 'judgment')} of v{facts['kept_from']} over them"
            if facts.get("kept_from")
            else ""
        )
        count = facts.get("collection_judgments", 0)
        return f"the {counted(count, 'judgment')} of collection {facts['collection']!r}{kept}"
    kept = (
        f"{facts['machine_grades_kept']} machine grades kept from v{facts.get('machine_grades_kept_from')}"
        if facts.get("machine_grades_kept")
        else ""
    )
    rules = facts.get("machine_rules")
    if not isinstance(rules, list):
        return kept or ", ".join(f"{key}: {value}" for key, value in sorted(facts.items()))
    assessor = facts.get("machine_assessor") or {}
    who = str(assessor.get("assessor", "a machine assessor"))
    model = assessor.get("model")
    prompt = assessor.get("prompt_hash") or assessor.get("prompt_sha256")
    extra = "".join([f", model {model}" if model else "", f", prompt {str(prompt)[:12]}" if prompt else ""])
    extra += _audit_words(assessor)
    counts = {
        FILL_UNJUDGED: f"{counted(facts.get('documents_filled', 0), 'document')} filled",
        BREAK_TIES: f"{counted(facts.get('ties_broken', 0), 'tie')} broken",
    }
    done = "; ".join(counts.get(rule, str(rule)) for rule in rules) or "no rule"
    return f"machine grades by {who}{extra}: {done}" + (f"; {kept}" if kept else "")


def _audit_words(assessor: dict) -> str:
    """The machine assessor's robustness audit as the provenance recorded it: nothing when the
    record predates audits (no key), "never audited" when it had none."""
    if "robustness_audit" not in assessor:
        return ""
    audit = assessor["robustness_audit"]
    if not isinstance(audit, dict):
        return ", never audited for robustness"
    other = "" if audit.get("same_prompt", True) else " (with another prompt)"
    return f", robustness audit #{audit.get('audit')}: {audit.get('verdict')}{other}"


def provenance_has_machine_grades(facts: dict) -> bool:
    """Whether a version's provenance says machine grades are in it (by a rule, or kept from its base)."""
    return any(facts.get(key) for key in ("documents_filled", "ties_broken", "machine_grades_kept"))


class ReferenceVersion(models.Model):
    """One version of a study's reference judgments. Scoring runs record the version they used;
    a new version (an import, an adjudication) re-scores the study."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="reference_versions")
    number = models.PositiveIntegerField()
    note = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # The creator's user name: kept when the account is deleted or, from an archive, absent here.
    created_by_name = models.CharField(max_length=150, null=True, blank=True)  # noqa: DJ001
    created_at = models.DateTimeField(auto_now_add=True)
    # How the version was made, for what a researcher cannot see in its grades: e.g. the rule that
    # let a machine assessor's grades in, with the assessor, model and prompt hash and how many it filled.
    # Nullable with no default so SQLite adds the column in place (a rebuilt table loses 0002's triggers);
    # none reads as {} (`facts`).
    provenance = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["study", "number"]
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="reference_version_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="reference_version_from_1"),
        ]

    def __str__(self):
        return f"{self.study} reference v{self.number}"

    @property
    def facts(self) -> dict:
        """The version's provenance, {} when none was recorded."""
        return self.provenance or {}

    @property
    def provenance_text(self) -> str:
        """The provenance in words ("" for none), as the version lists show it."""
        return provenance_words(self.facts)

    @property
    def machine_grades(self) -> bool:
        """Whether machine grades are in the version, by its provenance (a rule's, or kept from its base)."""
        return provenance_has_machine_grades(self.facts)

    @property
    def creator_name(self) -> str | None:
        """Who created the version: the account's user name while it is linked, else the name recorded."""
        return self.created_by.get_username() if self.created_by is not None else self.created_by_name


class ReferenceJudgment(models.Model):
    """The expert grade of a document for a scenario's topic, in one reference version."""

    version = models.ForeignKey(ReferenceVersion, on_delete=models.CASCADE, related_name="judgments")
    topic_id = models.CharField(max_length=100)
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    grade = models.SmallIntegerField()
    judged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # The judge's user name, kept as ReferenceVersion.created_by_name is.
    judged_by_name = models.CharField(max_length=150, null=True, blank=True)  # noqa: DJ001
    source = models.CharField(
        max_length=SOURCE_MAX_LENGTH,
        blank=True,
        help_text="Who or what produced it, e.g. an imported qrels file.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["version", "topic_id", "document"], name="reference_judgment_unique"
            ),
        ]

    def __str__(self):
        return f"{self.topic_id} {self.document_id} = {self.grade}"

    @property
    def judge_name(self) -> str | None:
        """Whose grade it is: the account's user name while it is linked, else the name recorded."""
        return self.judged_by.get_username() if self.judged_by is not None else self.judged_by_name
