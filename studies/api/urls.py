"""/api/: researchers' resources by study, the participant's own endpoints, and token sign-in (docs/api.md).
sessionlab/urls.py adds scoring's runs (scoring/api_urls.py) to the same `api` namespace."""

from django.urls import path

from sessionlab.auth_views import token_view
from studies.api import session_track, views

app_name = "api"

study = "studies/<int:study_pk>/"

urlpatterns = [
    path("auth/token/", token_view, name="token"),  # rate-limited (sessionlab/ratelimit.py)
    path("collections/", views.CollectionList.as_view(), name="collection_list"),
    path("collections/<int:pk>/shared-with/", views.CollectionSharing.as_view(), name="collection_share"),
    path("collections/<int:pk>/shared-with/<str:username>/", views.CollectionUnsharing.as_view(),
         name="collection_unshare"),
    path("studies/", views.StudyList.as_view(), name="study_list"),
    path(study, views.StudyDetail.as_view(), name="study_detail"),
    path(study + "grade-levels/", views.GradeLevelList.as_view(), name="grade_level_list"),
    path(study + "scenarios/", views.ScenarioList.as_view(), name="scenario_list"),
    path(study + "scenarios/<int:pk>/", views.ScenarioDetail.as_view(), name="scenario_detail"),
    path(study + "systems/", views.SystemList.as_view(), name="system_list"),
    path(study + "systems/<int:pk>/", views.SystemDetail.as_view(), name="system_detail"),
    path(study + "participants/", views.ParticipantList.as_view(), name="participant_list"),
    path(study + "participants/enrol/", views.ParticipantEnrol.as_view(), name="participant_enrol"),
    path(study + "participants/<int:pk>/", views.ParticipantDetail.as_view(), name="participant_detail"),
    path(study + "participants/<int:pk>/withdraw/", views.ParticipantWithdraw.as_view(), name="participant_withdraw"),
    path(study + "sessions/", views.SessionList.as_view(), name="session_list"),
    path(study + "sessions/<int:pk>/", views.SessionDetail.as_view(), name="session_detail"),
    path(study + "queries/", views.QueryList.as_view(), name="query_list"),
    path(study + "judgments/", views.JudgmentList.as_view(), name="judgment_list"),
    path(study + "events/", views.EventList.as_view(), name="event_list"),
    path(study + "session-track/", session_track.StudySessionTrack.as_view(), name="study_session_track"),
    path(study + "reference-versions/", views.ReferenceVersionList.as_view(), name="reference_version_list"),
    path(study + "reference-versions/import-qrels/", views.ReferenceVersionImportQrels.as_view(),
         name="reference_version_import"),
    path(study + "reference-versions/<int:pk>/", views.ReferenceVersionDetail.as_view(),
         name="reference_version_detail"),
    path(study + "reference-versions/<int:pk>/qrels/", views.ReferenceVersionQrels.as_view(),
         name="reference_version_qrels"),
    path(study + "reference-versions/<int:version_pk>/judgments/", views.ReferenceJudgmentList.as_view(),
         name="reference_judgment_list"),
    path("participant/", views.ParticipantMe.as_view(), name="participant_me"),
    path("participant/sessions/", views.ParticipantSessionStart.as_view(), name="participant_session_start"),
    path("participant/events/", views.ParticipantEvents.as_view(), name="participant_events"),
]
