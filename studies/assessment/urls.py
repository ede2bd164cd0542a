from django.urls import path

from studies.assessment import llm_audit_views, llm_views, views, work_views

app_name = "assessment"
urlpatterns = [
    path("", views.home, name="home"),
    # An assessor of another lab answers an invitation (only their own, while pending).
    path("invitations/<int:pk>/answer/", views.invitation_answer, name="invitation_answer"),
    # Assessors: only the studies they are members of.
    path("study/<slug:slug>/", views.assessor_study, name="assessor_study"),
    path("study/<slug:slug>/<str:code>/", views.assessor_form, name="assessor_form"),
    # Researchers: studies they can see.
    path("manage/<slug:slug>/", views.manage, name="manage"),
    path("manage/<slug:slug>/pool/build/", views.pool_build_page, name="pool_build"),
    path("manage/<slug:slug>/pool/refresh/", views.pool_refresh, name="pool_refresh"),
    path("manage/<slug:slug>/pool/add/", views.pool_add, name="pool_add"),
    path("manage/<slug:slug>/pool/import/", views.pool_import, name="pool_import"),
    path("manage/<slug:slug>/plan/", views.plan_set, name="plan_set"),
    path("manage/<slug:slug>/assessors/invite/", views.assessor_invite_page, name="assessor_invite"),
    # Assessor work: the scenarios each assessor judges, the guidelines on their form.
    path("manage/<slug:slug>/assessors/scenarios/", work_views.assessor_scenarios, name="assessor_scenarios"),
    path("manage/<slug:slug>/guidelines/", work_views.guidelines, name="guidelines"),
    path("manage/<slug:slug>/agreement/", views.agreement, name="agreement"),
    path("manage/<slug:slug>/disagreements/", views.disagreements_page, name="disagreements"),
    path("manage/<slug:slug>/adjudicate/", views.adjudicate_page, name="adjudicate"),
    path("manage/<slug:slug>/decide/", views.decide, name="decide"),
    path("manage/<slug:slug>/publish/", views.publish, name="publish"),
    path("manage/<slug:slug>/versions/<int:number>.qrels", views.version_qrels, name="version_qrels"),
    path("manage/<slug:slug>/versions/import/", views.version_import, name="version_import"),
    # Language-model assessors.
    path("manage/<slug:slug>/llm/add/", llm_views.llm_assessor_add, name="llm_assessor_add"),
    path("manage/<slug:slug>/llm/<int:pk>/", llm_views.llm_assessor, name="llm_assessor"),
    path("manage/<slug:slug>/llm/<int:pk>/run/", llm_views.llm_run_start_page, name="llm_run_start"),
    path("manage/<slug:slug>/llm/<int:pk>/test/", llm_views.llm_endpoint_check, name="llm_endpoint_test"),
    path("manage/<slug:slug>/llm/runs/<int:pk>/", llm_views.llm_run, name="llm_run"),
    # Its robustness audits.
    path(
        "manage/<slug:slug>/llm/<int:pk>/audit/", llm_audit_views.llm_audit_start_page, name="llm_audit_start"
    ),
    path("manage/<slug:slug>/llm/audits/<int:pk>/", llm_audit_views.llm_audit, name="llm_audit"),
    path(
        "manage/<slug:slug>/llm/runs/<int:pk>/cancel/", llm_views.llm_run_cancel_page, name="llm_run_cancel"
    ),
]
