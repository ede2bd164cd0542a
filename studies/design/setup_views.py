"""A study's set-up pages: the checklist, and one page per step (systems, scenarios, questionnaires, consent
and time limits). Thin: an access-checked fetch, a form, a service of setup_services, a redirect or a render.
The collection step's pages are studies/library's (they sit above design and interchange)."""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from sessionlab.plurals import counted
from studies.accounts.access import researcher_required, study_for_researcher
from studies.design import services
from studies.design import setup_services as setup
from studies.design.checklist import study_checklist, study_ready
from studies.design.orders import design_of, design_preview, design_summary
from studies.design.setup_forms import (
    ConsentForm,
    DesignForm,
    InstrumentForm,
    QuestionnaireItemForm,
    ScenarioSetupForm,
    SystemSetupForm,
    SystemTestForm,
    TimeLimitForm,
    TopicPickForm,
)
from studies.errors import InvalidAnswers, StudiesError
from studies.models import CollectionTopic, System
from studies.questionnaires.answers import answers_clean
from studies.questionnaires.instruments import INSTRUMENTS
from studies.questionnaires.items import (
    DEFAULT_POST_TASK_QUESTIONNAIRE,
    DEFAULT_QUESTIONNAIRE,
    item_pages,
    questionnaire_shown,
)
from studies.questionnaires.pages import first_page_with, page_next, question_page
from studies.search.generative import generative_answer
from studies.search.generative_keys import system_key_update
from studies.search.systems import system_search


def _refused(request, exc) -> None:
    messages.error(request, str(exc))


def _refused_on_form(form, exc) -> None:
    """A service's refusal of a form's data: a system's bad kind or config next to its field, else above."""
    if isinstance(form, SystemSetupForm):
        form.add_refusal(exc)
    else:
        form.add_error(None, str(exc))


@researcher_required
def study_setup(request, slug):
    study = study_for_researcher(request, slug)
    steps = study_checklist(study=study)
    return render(
        request,
        "studies/setup/checklist.html",
        {
            "study": study,
            "steps": steps,
            "ready": study_ready(steps),
            "enrolled": study.participants.filter(preview_at__isnull=True).count(),
        },
    )


# --- systems -----------------------------------------------------------------------------------------------


@researcher_required
def systems(request, slug):
    study = study_for_researcher(request, slug)
    form = SystemSetupForm(request.POST or None, prefix="system")
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            system = setup.system_save(
                study=study,
                code=data["code"].strip(),
                name=data["name"].strip(),
                backend=data["backend"],
                config=data["config"],
            )
            system_key_update(system=system, api_key=data.get("api_key", ""))
        except StudiesError as exc:
            _refused_on_form(form, exc)
        else:
            messages.success(request, f"System {system.code} added.")
            return redirect("studies:setup_systems", slug=study.slug)
    return render(
        request,
        "studies/setup/systems.html",
        {
            "study": study,
            "systems": study.systems.order_by("id"),
            "form": form,
            "test_form": SystemTestForm(),
            "locked": study.design_locked_at,
        },
        status=400 if form.errors else 200,
    )


def _system_of(study, pk) -> System:
    return get_object_or_404(study.systems, pk=pk)


def _design_row_edit(request, study, row, form, save, *, kind: str, list_page: str):
    """The edit page of one scenario or system: a valid form goes to `save(data)` (a design service, which
    asks the design-lock rule); a refusal is shown on the form, success goes back to the list."""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            save(data)
        except StudiesError as exc:
            _refused_on_form(form, exc)
        else:
            messages.success(request, f"{kind.capitalize()} {data['code']} saved.")
            return redirect(list_page, slug=study.slug)
    return render(
        request,
        f"studies/setup/{kind}_edit.html",
        {
            "study": study,
            kind: row,
            "form": form,
            "locked": study.design_locked_at,
            "key_state": SystemSetupForm.key_state(row) if isinstance(row, System) else "",
        },
        status=400 if form.errors else 200,
    )


@researcher_required
def system_edit(request, slug, pk):
    study = study_for_researcher(request, slug)
    system = _system_of(study, pk)
    form = SystemSetupForm(request.POST or None, prefix="system", initial=SystemSetupForm.initial_for(system))

    def save(data):
        setup.system_save(
            study=study,
            system=system,
            code=data["code"].strip(),
            name=data["name"].strip(),
            backend=data["backend"],
            config=data["config"],
        )
        system_key_update(
            system=system, api_key=data.get("api_key", ""), clear=data.get("clear_api_key", False)
        )

    return _design_row_edit(
        request, study, system, form, save, kind="system", list_page="studies:setup_systems"
    )


@researcher_required
@require_POST
def system_delete(request, slug, pk):
    study = study_for_researcher(request, slug)
    system = _system_of(study, pk)
    try:
        services.design_row_delete(study=study, row=system)
    except StudiesError as exc:
        _refused(request, exc)
    else:
        messages.success(request, f"System {system.code} removed.")
    return redirect("studies:setup_systems", slug=study.slug)


@researcher_required
@require_POST
def system_test(request, slug, pk):
    """Run one query on a system as a participant would, and show the answer or the error."""
    study = study_for_researcher(request, slug)
    system = _system_of(study, pk)
    form = SystemTestForm(request.POST)
    result = answered = None
    if system.backend == System.Backend.EXTERNAL:
        messages.info(
            request,
            "An external system's results come from your own front-end, which logs them with "
            "each query: there is nothing for SessionLab to run.",
        )
    elif form.is_valid() and system.backend == System.Backend.GENERATIVE:
        answered = generative_answer(system=system, question=form.cleaned_data["query"])
    elif form.is_valid():
        result = system_search(system=system, query=form.cleaned_data["query"])
    return render(
        request,
        "studies/setup/system_test.html",
        {"study": study, "system": system, "form": form, "result": result, "answered": answered},
    )


# --- scenarios ---------------------------------------------------------------------------------------------


@researcher_required
def scenarios(request, slug):
    study = study_for_researcher(request, slug)
    taken = set(study.scenarios.values_list("topic_id", flat=True))
    topics = (
        [
            t
            for t in CollectionTopic.objects.filter(collection_id=study.collection_id)
            if t.topic_id not in taken
        ]
        if study.collection_id
        else []
    )
    pick = TopicPickForm(
        request.POST if request.POST.get("action") == "topics" else None, topics=topics, prefix="pick"
    )
    write = ScenarioSetupForm(
        request.POST if request.POST.get("action") == "write" else None, prefix="scenario"
    )
    if request.method == "POST":
        try:
            if pick.is_bound and pick.is_valid():
                made = setup.scenarios_from_topics(study=study, topic_ids=pick.cleaned_data["topics"])
                messages.success(
                    request, f"{counted(len(made), 'scenario')} added from the topics; edit their text below."
                )
                return redirect("studies:setup_scenarios", slug=study.slug)
            if write.is_bound and write.is_valid():
                data = write.cleaned_data
                setup.scenario_save(
                    study=study,
                    code=data["code"].strip(),
                    title=data["title"].strip(),
                    text=data["text"].strip(),
                    topic_id=data["topic_id"].strip(),
                    practice=data["practice"],
                )
                messages.success(request, f"Scenario {data['code']} added.")
                return redirect("studies:setup_scenarios", slug=study.slug)
        except StudiesError as exc:
            (pick if pick.is_bound else write).add_error(None, str(exc))
    bad = (pick.is_bound and pick.errors) or (write.is_bound and write.errors)
    return render(
        request,
        "studies/setup/scenarios.html",
        {
            "study": study,
            "scenarios": study.scenarios.order_by("id"),
            "pick": pick,
            "write": write,
            "topics": topics,
            "locked": study.design_locked_at,
        },
        status=400 if bad else 200,
    )


@researcher_required
def scenario_edit(request, slug, pk):
    study = study_for_researcher(request, slug)
    scenario = get_object_or_404(study.scenarios, pk=pk)
    initial = {field: getattr(scenario, field) for field in ("code", "title", "text", "topic_id", "practice")}
    form = ScenarioSetupForm(request.POST or None, prefix="scenario", initial=initial)

    def save(data):
        setup.scenario_save(
            study=study,
            scenario=scenario,
            code=data["code"].strip(),
            title=data["title"].strip(),
            text=data["text"].strip(),
            topic_id=data["topic_id"].strip(),
            practice=data["practice"],
        )

    return _design_row_edit(
        request, study, scenario, form, save, kind="scenario", list_page="studies:setup_scenarios"
    )


@researcher_required
@require_POST
def scenario_delete(request, slug, pk):
    study = study_for_researcher(request, slug)
    scenario = get_object_or_404(study.scenarios, pk=pk)
    try:
        services.design_row_delete(study=study, row=scenario)
    except StudiesError as exc:
        _refused(request, exc)
    else:
        messages.success(request, f"Scenario {scenario.code} removed.")
    return redirect("studies:setup_scenarios", slug=study.slug)


# --- design ------------------------------------------------------------------------------------------------


@researcher_required
def design(request, slug):
    """The study's design (within- or between-subjects) and what it gives each participant; the practice
    scenarios are marked on the scenarios' pages."""
    study = study_for_researcher(request, slug)
    form = DesignForm(request.POST or None, initial={"design": design_of(study)})
    if request.method == "POST" and form.is_valid():
        try:
            services.study_design_set(study=study, design=form.cleaned_data["design"])
        except StudiesError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Design saved.")
            return redirect("studies:setup_design", slug=study.slug)
    scenarios = list(study.scenarios.order_by("id"))
    systems = list(study.systems.order_by("id"))
    return render(
        request,
        "studies/setup/design.html",
        {
            "study": study,
            "form": form,
            "summary": design_summary(study=study, scenarios=scenarios, systems=systems),
            "preview": design_preview(study=study, scenarios=scenarios, systems=systems),
            "locked": study.design_locked_at,
        },
        status=400 if form.errors else 200,
    )


# --- questionnaires ----------------------------------------------------------------------------------------


def _questionnaire_lists(study) -> list[tuple]:
    """(which, title, stored items with their page numbers, the defaults shown when none are stored)."""
    lists = []
    for which, defaults in (
        ("questionnaire", DEFAULT_QUESTIONNAIRE),
        ("pre_task_questionnaire", []),  # no default: none asked until a question is added
        ("post_task_questionnaire", DEFAULT_POST_TASK_QUESTIONNAIRE),
    ):
        rows, page = [], 1
        for position, item in enumerate(getattr(study, which) or []):
            if position and isinstance(item, dict) and item.get("new_page"):
                page += 1
            rows.append({"item": item, "page": page, "first": position == 0})
        lists.append((which, setup.QUESTIONNAIRES[which], rows, defaults))
    return lists


def _names_of(study):
    def taken(which: str) -> set:
        return {i.get("name") for i in getattr(study, which, None) or [] if isinstance(i, dict)}

    return taken


def _editing(request, study):
    """The item form filled with the item `?edit=<which>:<name>` names, or None."""
    which, _, name = request.GET.get("edit", "").partition(":")
    if which not in setup.QUESTIONNAIRES:
        return None
    item = next(
        (i for i in getattr(study, which) or [] if isinstance(i, dict) and i.get("name") == name), None
    )
    if item is None:
        return None
    return QuestionnaireItemForm.of_item(which, item, prefix="item", taken=_names_of(study))


# What each button of the editor's item rows asks of the services (action -> service call).
_ROW_ACTIONS = {
    "remove": lambda study, which, name: setup.questionnaire_item_remove(study=study, which=which, name=name),
    "up": lambda study, which, name: setup.questionnaire_item_move(
        study=study, which=which, name=name, by=-1
    ),
    "down": lambda study, which, name: setup.questionnaire_item_move(
        study=study, which=which, name=name, by=1
    ),
    "page_break": lambda study, which, name: setup.questionnaire_page_break(
        study=study, which=which, name=name, on=True
    ),
    "join_page": lambda study, which, name: setup.questionnaire_page_break(
        study=study, which=which, name=name, on=False
    ),
}
_ROW_DONE = {
    "remove": "Question {name} removed.",
    "up": "Question {name} moved up.",
    "down": "Question {name} moved down.",
    "page_break": "A new page starts at {name}.",
    "join_page": "{name} joined the page before.",
}


@researcher_required
def questionnaires(request, slug):
    study = study_for_researcher(request, slug)
    action = request.POST.get("action")
    taken = _names_of(study)
    item_form = QuestionnaireItemForm(request.POST if action == "item" else None, prefix="item", taken=taken)
    instrument_form = InstrumentForm(request.POST if action == "instrument" else None, prefix="instrument")
    if request.method == "POST":
        here = redirect("studies:setup_questionnaires", slug=study.slug)
        try:
            if action == "item" and item_form.is_valid():
                data = item_form.cleaned_data
                if data["original"]:
                    setup.questionnaire_item_edit(
                        study=study, which=data["which"], name=data["original"], item=data["item"]
                    )
                    messages.success(request, f"Question {data['item']['name']} saved.")
                else:
                    setup.questionnaire_item_add(study=study, which=data["which"], item=data["item"])
                    messages.success(request, f"Question {data['item']['name']} added.")
                return here
            if action == "instrument" and instrument_form.is_valid():
                data = instrument_form.cleaned_data
                setup.questionnaire_instrument_add(
                    study=study, which=data["which"], instrument=data["instrument"]
                )
                messages.success(request, f"{INSTRUMENTS[data['instrument']].title} added.")
                return here
            if action in _ROW_ACTIONS:
                name = request.POST.get("name", "")
                _ROW_ACTIONS[action](study, request.POST.get("which", ""), name)
                messages.success(request, _ROW_DONE[action].format(name=name))
                return here
        except StudiesError as exc:
            if action in _ROW_ACTIONS:
                _refused(request, exc)
                return here
            (instrument_form if action == "instrument" else item_form).add_error(None, str(exc))
    elif (editing := _editing(request, study)) is not None:
        item_form = editing
    bad = (item_form.is_bound and item_form.errors) or (instrument_form.is_bound and instrument_form.errors)
    return render(
        request,
        "studies/setup/questionnaires.html",
        {
            "study": study,
            "lists": _questionnaire_lists(study),
            "item_form": item_form,
            "editing": bool(item_form["original"].value()),
            "instrument_form": instrument_form,
            "instruments": INSTRUMENTS.values(),
            "answered": study.participants.filter(preview_at__isnull=True)
            .exclude(questionnaire_answers={})
            .count(),
        },
        status=400 if bad else 200,
    )


@researcher_required
@require_http_methods(["GET", "POST"])
def questionnaire_preview(request, slug, which):
    """A questionnaire as a participant sees it, page by page, with the participant's checks; nothing is
    stored. The last page shows the answers that would be saved."""
    study = study_for_researcher(request, slug)
    if which not in setup.QUESTIONNAIRES:
        raise Http404("No such questionnaire.")
    items = questionnaire_shown(study, which)
    saved = None
    if request.method == "POST":
        try:
            page = page_next(items, request.POST)
            if page is None:
                saved = answers_clean(items, request.POST)
                page = question_page(items, request.POST, {}, len(item_pages(items)))
        except InvalidAnswers as invalid:
            page = question_page(items, request.POST, invalid.errors, first_page_with(items, invalid.errors))
    else:
        page = question_page(items, {}, {}, 1)
    bad = any(row["error"] for row in page.items)
    return render(
        request,
        "studies/setup/questionnaire_preview.html",
        {
            "study": study,
            "which": which,
            "title": setup.QUESTIONNAIRES[which],
            "page": page,
            "saved": saved,
        },
        status=400 if bad else 200,
    )


# --- consent and time limits -------------------------------------------------------------------------------


@researcher_required
def consent(request, slug):
    study = study_for_researcher(request, slug)
    action = request.POST.get("action")
    consent_form = ConsentForm(
        request.POST if action == "consent" else None,
        prefix="consent",
        initial={"consent_text": study.consent_text, "consent_version": study.consent_version},
    )
    time_form = TimeLimitForm(
        request.POST if action == "time" else None,
        prefix="time",
        initial={"time_limit_minutes": study.time_limit_minutes},
    )
    if request.method == "POST":
        try:
            if action == "consent" and consent_form.is_valid():
                setup.consent_update(
                    study=study,
                    text=consent_form.cleaned_data["consent_text"],
                    version=consent_form.cleaned_data["consent_version"],
                    by=request.user,
                )
                messages.success(request, "Consent text saved.")
                return redirect("studies:setup_consent", slug=study.slug)
            if action == "time" and time_form.is_valid():
                services.study_update(
                    study=study, time_limit_minutes=time_form.cleaned_data["time_limit_minutes"]
                )
                messages.success(request, "Time limit saved.")
                return redirect("studies:setup_consent", slug=study.slug)
        except StudiesError as exc:
            consent_form.add_error(None, str(exc))
    bad = (consent_form.is_bound and consent_form.errors) or (time_form.is_bound and time_form.errors)
    return render(
        request,
        "studies/setup/consent.html",
        {
            "study": study,
            "consent_form": consent_form,
            "time_form": time_form,
            "versions": setup.consent_versions(study=study),
        },
        status=400 if bad else 200,
    )
