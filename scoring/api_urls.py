"""/api/studies/<study_pk>/scoring-runs/...: included by sessionlab/urls.py in the `api` namespace."""

from django.urls import path

from . import api

run = "<int:run_pk>/"

urlpatterns = [
    path("", api.ScoringRunList.as_view(), name="scoring_run_list"),
    path(run, api.ScoringRunDetail.as_view(), name="scoring_run_detail"),
    path(run + "make-default/", api.ScoringRunMakeDefault.as_view(), name="scoring_run_make_default"),
    path(run + "sessions/", api.ScoringRunSessionList.as_view(), name="scoring_run_session_list"),
    path(
        run + "sessions/<int:session_pk>/queries/",
        api.ScoringRunQueryList.as_view(),
        name="scoring_run_query_list",
    ),
    path(run + "query-scores/", api.ScoringRunQueryScoreList.as_view(), name="scoring_run_query_score_list"),
]
