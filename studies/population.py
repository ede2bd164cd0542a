"""The analysis population: whose sessions an analysis counts. THE definition, in one place: the
scoring runs' reads, every dashboard chart, the statistics, planning's pilots and the exports all filter with
`population_q` (docs/dashboards.md, "Populations").

A population is a base and the states or checks it leaves out:

- base "completers": participants in the completed state only;
- base "itt" (intention to treat): every enrolled participant, dropouts' finished sessions included;
- leave-outs (LEAVE_OUTS), on either base: participants marked excluded (the agreement rule or a
  researcher), screened out by a failed check, screened out for any reason, timed out, returned,
  withdrawn, completed but flagged by the minimum-effort rules, or not finished yet.

A researcher's try-out participant (a preview) is never in any population. Written as text (the study's
setting, Study.analysis_population; the query parameter `population`): the base, then a colon and the
leave-outs separated by commas: "completers", "itt", "itt:excluded,timed_out". A study without a setting
reads as DEFAULT ("itt:excluded": everyone enrolled but the participants marked excluded, as the dashboards
counted before populations existed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import BooleanField, Count, ExpressionWrapper, Max, OuterRef, Q, Subquery

from studies.errors import StudiesError
from studies.models import Participant, ParticipantState, Study

BASES = {
    "itt": "intention to treat (every enrolled participant, dropouts' finished sessions included)",
    "completers": "completers only (participants in the completed state)",
}
BASE_LABELS = {"itt": "intention to treat", "completers": "completers only"}

# The reasons the recruitment rules write (studies/participation/recruitment/states.py): a screen-out by a
# failed check starts "failed checks: "; a completion below the effort rules (outcome "flagged") starts with
# effort.shortfall_text's words.
FAILED_CHECKS_PREFIX = "failed checks"
EFFORT_FLAGGED_PREFIX = "effort below the study's rules"
UNFINISHED_STATES = (ParticipantState.INVITED, ParticipantState.STARTED, ParticipantState.ACTIVE)

LEAVE_OUTS = {
    "excluded": "excluded (by the agreement rule or a researcher)",
    "failed_checks": "screened out by a failed check",
    "screened_out": "screened out (any reason)",
    "timed_out": "timed out",
    "returned": "returned",
    "withdrawn": "withdrawn",
    "effort_flagged": "flagged by the minimum-effort rules",
    "unfinished": "not finished (invited, started or active)",
}


class PopulationError(StudiesError):
    """A population that names no base or no leave-out; the message names the parameter and the value."""


def _leave_out_q(key: str, p: str) -> Q:
    """The participants a leave-out removes, as a filter on Participant's columns (prefix `p`)."""
    state, reason = f"{p}state", f"{p}state_reason__startswith"
    if key == "excluded":
        return Q(**{f"{p}excluded_at__isnull": False})
    if key == "failed_checks":
        return Q(**{state: ParticipantState.SCREENED_OUT, reason: FAILED_CHECKS_PREFIX})
    if key == "effort_flagged":
        return Q(**{state: ParticipantState.COMPLETED, reason: EFFORT_FLAGGED_PREFIX})
    if key == "unfinished":
        return Q(**{f"{p}state__isnull": True}) | Q(**{f"{state}__in": UNFINISHED_STATES})
    return Q(**{state: key})  # screened_out, timed_out, returned, withdrawn: the state itself


@dataclass(frozen=True)
class Population:
    base: str = "itt"
    leave_out: frozenset[str] = frozenset()

    def __post_init__(self):
        if self.base not in BASES:
            raise PopulationError(f"population: {self.base[:40]!r} is not one of {', '.join(BASES)}")
        unknown = sorted(set(self.leave_out) - set(LEAVE_OUTS))
        if unknown:
            raise PopulationError(f"leave_out: {unknown[0][:40]!r} is not one of {', '.join(LEAVE_OUTS)}")

    @classmethod
    def parse(cls, text: str) -> Population:
        """ "itt", "completers", "itt:excluded,timed_out"; PopulationError names what is wrong."""
        base, _, rest = (text or "").strip().partition(":")
        return cls(base.strip(), frozenset(_keys(rest.split(","))))

    def code(self) -> str:
        """The text `parse` reads back (leave-outs in LEAVE_OUTS' order)."""
        keys = [key for key in LEAVE_OUTS if key in self.leave_out]
        return self.base + (":" + ",".join(keys) if keys else "")

    def with_leave_out(self, key: str, on: bool) -> Population:
        return Population(self.base, self.leave_out | {key} if on else self.leave_out - {key})

    def label(self) -> str:
        """Short, for a chart's subtitle: "intention to treat without excluded, timed out"."""
        keys = [key.replace("_", " ") for key in LEAVE_OUTS if key in self.leave_out]
        return BASE_LABELS[self.base] + (f" without {', '.join(keys)}" if keys else "")

    def text(self) -> str:
        """In full, for notes and the exports' README."""
        keys = [LEAVE_OUTS[key] for key in LEAVE_OUTS if key in self.leave_out]
        return BASES[self.base] + (f", leaving out participants {'; '.join(keys)}" if keys else "")


DEFAULT = Population("itt", frozenset({"excluded"}))


def _keys(values: Iterable[str]) -> list[str]:
    return [v.strip() for v in values if v and v.strip()]


def study_population(study: Study) -> Population:
    """The study's default population (its setting; DEFAULT when it has none)."""
    text = getattr(study, "analysis_population", None)
    return Population.parse(text) if text else DEFAULT


def population_from_query(query, study: Study) -> Population:
    """The population a page or a download asks for: `population` (a base, or the whole text), `leave_out`
    (repeated, or separated by commas) and the older `excluded=include|exclude`; the study's default where
    none is given. PopulationError names the parameter."""
    text = (query.get("population") or "").strip()
    extra = _keys(part for value in query.getlist("leave_out") for part in value.split(","))
    population = Population.parse(text) if text else study_population(study)
    if text or extra:
        population = Population(population.base, population.leave_out | set(extra))
    excluded = (query.get("excluded") or "").strip()
    if excluded:
        if excluded not in ("exclude", "include"):
            raise PopulationError(f"excluded is exclude or include, not {excluded[:40]!r}")
        population = population.with_leave_out("excluded", excluded == "exclude")
    return population


def population_q(population: Population, prefix: str = "") -> Q:
    """THE filter: the participants in `population`, on Participant's columns (prefix "participant__" from a
    score, "assignment__participant__" from a session). Previews are never in it."""
    q = Q(**{f"{prefix}preview_at__isnull": True})
    if population.base == "completers":
        q &= Q(**{f"{prefix}state": ParticipantState.COMPLETED})
    for key in LEAVE_OUTS:
        if key in population.leave_out:
            q &= ~_leave_out_q(key, prefix)
    return q


def in_population(population: Population, prefix: str = "") -> ExpressionWrapper:
    """`population_q` as a column (True / False per row), so a reader counts what it leaves out in the same
    query."""
    return ExpressionWrapper(population_q(population, prefix), output_field=BooleanField())


def population_participants(study: Study, population: Population):
    """The study's participants in the population."""
    return Participant.objects.filter(population_q(population), study=study)


@dataclass(frozen=True)
class PopulationCount:
    """The study's enrolled participants (previews aside), those in the population, and the codes left out."""

    enrolled: int
    counted: int
    left_out: tuple[str, ...]


def population_count(study: Study, population: Population) -> PopulationCount:
    """One query."""
    rows = list(
        Participant.objects.filter(study=study, preview_at__isnull=True)
        .annotate(inside=in_population(population))
        .order_by("enrolment_index")
        .values_list("code", "inside")
    )
    return PopulationCount(
        len(rows), sum(1 for _, inside in rows if inside), tuple(code for code, inside in rows if not inside)
    )


# --- when membership may have changed ----------------------------------------------------------------------


def population_stamp_columns(study_ref=None) -> dict:
    """Columns that change whenever any participant of the study may have moved in or out of a population:
    how many there are, how many are marked excluded, the latest state change and the latest mark. For
    `annotate` on a query of runs or studies (study_ref: the study's id column, OuterRef("study_id") by
    default), so a cache key costs no query of its own."""
    study_ref = OuterRef("study_id") if study_ref is None else study_ref
    of_study = Participant.objects.filter(study_id=study_ref).order_by().values("study_id")

    def one(aggregate):
        return Subquery(of_study.annotate(value=aggregate).values("value")[:1])

    return {
        "population_n": one(Count("pk")),
        "population_marked": one(Count("excluded_at")),
        "population_moved": one(Max("state_changed_at")),
        "population_marked_at": one(Max("excluded_at")),
    }


STAMP_COLUMNS = tuple(population_stamp_columns(OuterRef("pk")))


def population_stamp(study: Study) -> tuple:
    """The study's stamp (population_stamp_columns), in one query."""
    return tuple(
        Study.objects.filter(pk=study.pk)
        .annotate(**population_stamp_columns(OuterRef("pk")))
        .values_list(*STAMP_COLUMNS)
        .first()
        or ()
    )


def stamp_of(row) -> tuple:
    """The stamp read off an instance annotated with population_stamp_columns."""
    return tuple(getattr(row, name) for name in STAMP_COLUMNS)
