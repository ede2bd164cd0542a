"""/api/: researchers' resources by study, the participant's own endpoints, and token sign-in (docs/api.md).
sessionlab/urls.py adds scoring's runs (scoring/api_urls.py) to the same `api` namespace."""

from django.urls import path

from sessionlab.auth_views import token_view
from studies.api import exports, session_track
from studies.api.views import (
    agreement,
    collections,
    design,
    llm,
    participant_api,
    participant_way,
    participants,
    references,
    sessions,
)
from studies.api.views import studies as study_views

app_name = "api"

study = "studies/<int:study_pk>/"

urlpatterns = [
    path("auth/token/", token_view, name="token"),  # rate-limited (sessionlab/ratelimit.py)
    path("collections/", collections.CollectionList.as_view(), name="collection_list"),
    path(
        "collections/<int:pk>/shared-with/", collections.CollectionSharing.as_view(), name="collection_share"
    ),
    path(
        "collections/<int:pk>/shared-with/<str:username>/",
        collections.CollectionUnsharing.as_view(),
        name="collection_unshare",
    ),
    path("studies/", study_views.StudyList.as_view(), name="study_list"),
    path(study, study_views.StudyDetail.as_view(), name="study_detail"),
    path(study + "status/", study_views.StudyStatus.as_view(), name="study_status"),
    path(study + "grade-levels/", study_views.GradeLevelList.as_view(), name="grade_level_list"),
    path(study + "scenarios/", design.ScenarioList.as_view(), name="scenario_list"),
    path(study + "scenarios/<int:pk>/", design.ScenarioDetail.as_view(), name="scenario_detail"),
    path(study + "systems/", design.SystemList.as_view(), name="system_list"),
    path(study + "systems/<int:pk>/", design.SystemDetail.as_view(), name="system_detail"),
    path(study + "participants/", participants.ParticipantList.as_view(), name="participant_list"),
    path(study + "participants/enrol/", participants.ParticipantEnrol.as_view(), name="participant_enrol"),
    path(
        study + "participants/<int:pk>/", participants.ParticipantDetail.as_view(), name="participant_detail"
    ),
    path(
        study + "participants/<int:pk>/withdraw/",
        participants.ParticipantWithdraw.as_view(),
        name="participant_withdraw",
    ),
    path(study + "sessions/", sessions.SessionList.as_view(), name="session_list"),
    path(study + "sessions/<int:pk>/", sessions.SessionDetail.as_view(), name="session_detail"),
    path(study + "queries/", sessions.QueryList.as_view(), name="query_list"),
    path(study + "judgments/", sessions.JudgmentList.as_view(), name="judgment_list"),
    path(study + "events/", sessions.EventList.as_view(), name="event_list"),
    path(study + "session-track/", session_track.StudySessionTrack.as_view(), name="study_session_track"),
    path(study + "agreement/", agreement.StudyAgreement.as_view(), name="study_agreement"),
    path(study + "archive/", exports.StudyArchive.as_view(), name="study_archive"),
    path(study + "tables/", exports.StudyTables.as_view(), name="study_tables"),
    path(study + "runs/", exports.StudyRuns.as_view(), name="study_runs"),
    path(
        study + "reference-versions/",
        references.ReferenceVersionList.as_view(),
        name="reference_version_list",
    ),
    path(
        study + "reference-versions/import-qrels/",
        references.ReferenceVersionImportQrels.as_view(),
        name="reference_version_import",
    ),
    path(
        study + "reference-versions/publish/",
        references.ReferenceVersionPublish.as_view(),
        name="reference_version_publish",
    ),
    path(study + "llm-assessors/", llm.LLMAssessorList.as_view(), name="llm_assessor_list"),
    path(study + "llm-assessors/<int:pk>/", llm.LLMAssessorDetail.as_view(), name="llm_assessor_detail"),
    path(study + "llm-assessors/<int:assessor_pk>/runs/", llm.LLMRunList.as_view(), name="llm_run_list"),
    path(study + "llm-runs/<int:pk>/", llm.LLMRunDetail.as_view(), name="llm_run_detail"),
    path(study + "llm-runs/<int:pk>/cancel/", llm.LLMRunCancel.as_view(), name="llm_run_cancel"),
    path(study + "llm-runs/<int:run_pk>/requests/", llm.LLMRequestList.as_view(), name="llm_request_list"),
    path(
        study + "reference-versions/<int:pk>/",
        references.ReferenceVersionDetail.as_view(),
        name="reference_version_detail",
    ),
    path(
        study + "reference-versions/<int:pk>/qrels/",
        references.ReferenceVersionQrels.as_view(),
        name="reference_version_qrels",
    ),
    path(
        study + "reference-versions/<int:version_pk>/judgments/",
        references.ReferenceJudgmentList.as_view(),
        name="reference_judgment_list",
    ),
    path("participant/", participant_api.ParticipantMe.as_view(), name="participant_me"),
    path(
        "participant/sessions/",
        participant_api.ParticipantSessionStart.as_view(),
        name="participant_session_start",
    ),
    path("participant/events/", participant_api.ParticipantEvents.as_view(), name="participant_events"),
    # The rest of the participant's way (docs/api.md, "The whole way").
    path("participant/step/", participant_way.ParticipantStepView.as_view(), name="participant_step"),
    path("participant/consent/", participant_way.ParticipantConsent.as_view(), name="participant_consent"),
    path(
        "participant/questionnaire/",
        participant_way.ParticipantQuestionnaire.as_view(),
        name="participant_questionnaire",
    ),
    path("participant/checks/", participant_way.ParticipantCheck.as_view(), name="participant_check"),
    path("participant/pre-task/", participant_way.ParticipantPreTask.as_view(), name="participant_pre_task"),
    path("participant/gold/", participant_way.ParticipantGold.as_view(), name="participant_gold"),
    path(
        "participant/post-task/", participant_way.ParticipantPostTask.as_view(), name="participant_post_task"
    ),
    path(
        "participant/withdraw/",
        participant_way.ParticipantWithdrawSelf.as_view(),
        name="participant_withdraw_self",
    ),
]
