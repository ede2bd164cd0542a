"""The pre-registration document: AsPredicted's nine questions and the OSF Preregistration template's items,
each answered from the study's facts (facts.py) or from the researcher's own text, rendered as Markdown and
as JSON in the shape the `preregr` R package reads (a form of sections and items, and the specs: item id ->
content). Pure: plain dicts in, text out."""

from __future__ import annotations

import json
from dataclasses import dataclass

# OSF Preregistration template's sections, in its order.
SECTIONS = (
    ("study_information", "Study information"),
    ("design_plan", "Design plan"),
    ("sampling_plan", "Sampling plan"),
    ("variables", "Variables"),
    ("analysis_plan", "Analysis plan"),
    ("other", "Other"),
)


@dataclass(frozen=True)
class Item:
    """One question: its id (the preregr item id), its OSF section, its AsPredicted number (0: none)."""

    item_id: str
    section: str
    aspredicted: int
    label: str


ITEMS = (
    Item("title", "study_information", 9, "Title of the study"),
    Item("hypotheses", "study_information", 2, "The main question asked or hypothesis tested"),
    Item("existing_data", "sampling_plan", 1, "Have any data been collected for this study already?"),
    Item("study_design", "design_plan", 4, "Conditions: how many, which, and how participants are assigned"),
    Item("measured_variables", "variables", 3, "The key dependent variable and how it is measured"),
    Item("statistical_models", "analysis_plan", 5, "The analyses that will test the main question"),
    Item("data_exclusion", "analysis_plan", 6, "How outliers and exclusions are defined and handled"),
    Item("sample_size", "sampling_plan", 7, "The sample size and how it was decided"),
    Item("other", "other", 8, "Anything else pre-registered"),
)

ASPREDICTED_QUESTIONS = {
    1: "Data collection. Have any data been collected for this study already?",
    2: "Hypothesis. What's the main question being asked or hypothesis being tested in this study?",
    3: "Dependent variable. Describe the key dependent variable(s) specifying how they will be measured.",
    4: "Conditions. How many and which conditions will participants be assigned to?",
    5: "Analyses. Specify exactly which analyses you will conduct to examine the main question/hypothesis.",
    6: "Outliers and Exclusions. Describe exactly how outliers will be defined and handled, and your precise "
    "rule(s) for excluding observations.",
    7: "Sample Size. How many observations will be collected or what will determine sample size?",
    8: "Other. Anything else you would like to pre-register?",
    9: "Name. Give a title for this AsPredicted pre-registration.",
}


def _design_text(design: dict) -> str:
    scored = [s for s in design["scenarios"] if not s[2]]
    practice = [s for s in design["scenarios"] if s[2]]
    systems = ", ".join(f"{code} ({name}, {backend})" for code, name, backend, _config in design["systems"])
    kind = (
        "within-subject: each participant works every system"
        if design["kind"] == "within"
        else ("between-subject: each participant works one system")
    )
    text = (
        f"{len(design['systems'])} systems: {systems}. {len(scored)} scored scenarios "
        f"({', '.join(s[0] + ' ' + s[1] for s in scored)})"
        + (f" after {len(practice)} practice scenario(s)" if practice else "")
        + f". Design {kind}; the order of scenarios and systems is set by a balanced Latin square, each new "
        "participant taking the next row (rows of participants who drop out are re-issued)."
    )
    if design.get("time_limit_minutes"):
        text += f" Each scenario has a time limit of {design['time_limit_minutes']} minutes."
    return text


def _measure_text(measure: dict, summary_label: str) -> str:
    params = measure.get("parameters")
    if params is None:
        return f"The {summary_label} of each session (the study has no default scoring run yet)."
    return (
        f"The {summary_label} of each session's sDCG curve (Järvelin et al., ECIR 2008), scored against the "
        f"reference judgments: weights {params['weights'] or 'the default for the scale'}, b {params['b']}, "
        f"bq {params['bq']}, the top {params['top']} of each result, formulation {params['formulation']}, "
        f"gain {params['gain']}, duplicates {params['duplicates']}, short lists {params['short_lists']}, "
        f"scan {params['scan']}, judgments {params['judgments']}."
    )


def _exclusion_text(facts: dict) -> str:
    exclusion, effort, checks = facts["exclusion"], facts["effort"], facts["checks"]
    parts = [f"The analysis population is {exclusion['population']}."]
    if exclusion["min_agreement"] is not None:
        parts.append(
            f"A participant whose {exclusion['measure']} with the reference is below "
            f"{exclusion['min_agreement']} on at least {exclusion['min_documents']} documents is excluded."
        )
    if effort and any(effort[key] for key in ("min_queries", "min_judgments", "min_active_seconds")):
        parts.append(
            f"Each task needs at least {effort['min_queries']} queries, {effort['min_judgments']} judgments "
            f"and {effort['min_active_seconds']} active seconds; below them, {effort['outcome']}."
        )
    if checks["items"]:
        parts.append(f"Checks before the first scenario ({checks['preset']}): {', '.join(checks['items'])}.")
    return " ".join(parts)


def document(*, study_name: str, facts: dict, answers: dict, sessions_done: int, summary_label: str) -> dict:
    """item id -> its content, for the study's facts and the researcher's answers."""
    planned = answers.get("planned_participants")
    plan = answers.get("power_plan_text") or ""
    sample = (
        (f"{planned} participants." if planned else "Not stated.")
        + (f" {plan}" if plan else "")
        + " Participants are recruited until that number have completed."
    )
    existing = (
        "No: no session has been finished yet."
        if not sessions_done
        else f"Yes: {sessions_done} sessions have been finished (a pilot, or data already collected)."
    )
    other = answers.get("other", "").strip()
    reference = facts["reference_version"]
    other = (other + "\n\n" if other else "") + (
        f"Scored against reference version {reference}." if reference else "No reference judgments yet."
    )
    return {
        "title": study_name,
        "hypotheses": answers.get("hypotheses", "").strip() or "Not stated.",
        "existing_data": existing,
        "study_design": _design_text(facts["design"]),
        "measured_variables": _measure_text(facts["primary_measure"], summary_label),
        "statistical_models": answers.get("analysis", "").strip() or "Not stated.",
        "data_exclusion": _exclusion_text(facts),
        "sample_size": sample,
        "other": other,
    }


def as_markdown(content: dict, *, frozen: str, deviations: list[str]) -> str:
    """The document as Markdown: AsPredicted's questions, the OSF template's sections, then what changed."""
    lines = [f"# Pre-registration: {content['title']}", "", frozen, "", "## AsPredicted", ""]
    by_number = {item.aspredicted: item for item in ITEMS if item.aspredicted}
    for number in sorted(ASPREDICTED_QUESTIONS):
        lines += [
            f"**{number}) {ASPREDICTED_QUESTIONS[number]}**",
            "",
            content[by_number[number].item_id],
            "",
        ]
    lines += ["## OSF Preregistration", ""]
    for section, heading in SECTIONS:
        lines += [f"### {heading}", ""]
        for item in ITEMS:
            if item.section == section:
                lines += [f"**{item.label}**", "", content[item.item_id], ""]
    lines += ["## Deviations from the frozen plan", ""]
    lines += [f"- {text}" for text in deviations] or ["None."]
    return "\n".join(lines) + "\n"


def as_preregr_json(content: dict, *, sessionlab: dict) -> str:
    """The shape `preregr::prereg_spec_to_json(includeFormSpec = TRUE)` writes: `form` (metadata, sections and
    items keyed by their ids) and `specs` (item id -> content); SessionLab's own record under `sessionlab`."""
    form = {
        "metadata": {
            "title": "SessionLab pre-registration (AsPredicted and OSF Preregistration items)",
            "version": "1",
        },
        "sections": {section: {"label": heading} for section, heading in SECTIONS},
        "items": {
            item.item_id: {
                "label": item.label,
                "section_id": item.section,
                **({"aspredicted": ASPREDICTED_QUESTIONS[item.aspredicted]} if item.aspredicted else {}),
            }
            for item in ITEMS
        },
    }
    return json.dumps({"form": form, "specs": content, "sessionlab": sessionlab}, indent=2, sort_keys=False)
