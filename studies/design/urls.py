from django.urls import path

from studies.accounts import views as account_views
from studies.design import lifecycle_views, setup_views, views

app_name = "studies"
urlpatterns = [
    path("", views.study_list, name="study_list"),
    # The New-study page is the library's (studies/library/new_urls.py): it builds on a collection.
    # Another researcher's account, made by a researcher (studies/accounts/services.py: researcher_invite).
    path("researchers/new/", account_views.researcher_invite_page, name="researcher_invite"),
    path("<slug:slug>/", views.study_detail, name="study_detail"),
    # What the study page refreshes without a reload (static/js/study-progress.js).
    path("<slug:slug>/progress/", views.study_progress, name="study_progress"),
    path("<slug:slug>/scenarios/add/", views.scenario_add_page, name="scenario_add"),
    path("<slug:slug>/systems/add/", views.system_add_page, name="system_add"),
    path("<slug:slug>/participants/enrol/", views.participants_enrol_page, name="participants_enrol"),
    # The life cycle and the preview (studies/design/lifecycle.py).
    path("<slug:slug>/status/", lifecycle_views.study_status, name="study_status"),
    path("<slug:slug>/preview/", lifecycle_views.preview_start_page, name="preview_start"),
    path("<slug:slug>/preview/delete/", lifecycle_views.preview_delete_page, name="preview_delete"),
    # The set-up checklist and its steps (docs/setting-up-a-study.md).
    path("<slug:slug>/setup/", setup_views.study_setup, name="setup"),
    path("<slug:slug>/setup/systems/", setup_views.systems, name="setup_systems"),
    path("<slug:slug>/setup/systems/<int:pk>/", setup_views.system_edit, name="setup_system_edit"),
    path("<slug:slug>/setup/systems/<int:pk>/delete/", setup_views.system_delete, name="setup_system_delete"),
    path("<slug:slug>/setup/systems/<int:pk>/test/", setup_views.system_test, name="setup_system_test"),
    path("<slug:slug>/setup/scenarios/", setup_views.scenarios, name="setup_scenarios"),
    path("<slug:slug>/setup/scenarios/<int:pk>/", setup_views.scenario_edit, name="setup_scenario_edit"),
    path(
        "<slug:slug>/setup/scenarios/<int:pk>/delete/",
        setup_views.scenario_delete,
        name="setup_scenario_delete",
    ),
    path("<slug:slug>/setup/design/", setup_views.design, name="setup_design"),
    path("<slug:slug>/setup/questionnaires/", setup_views.questionnaires, name="setup_questionnaires"),
    path(
        "<slug:slug>/setup/questionnaires/<str:which>/preview/",
        setup_views.questionnaire_preview,
        name="setup_questionnaire_preview",
    ),
    path("<slug:slug>/setup/consent/", setup_views.consent, name="setup_consent"),
]
