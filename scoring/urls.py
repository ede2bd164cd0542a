from django.urls import include, path

from .dashboards import reference_change, session_table, views
from .package import views as package
from .preregistration import views as preregistration

app_name = "scoring"
urlpatterns = [
    path("<slug:slug>/", views.runs, name="runs"),
    path("<slug:slug>/compare/", views.compare, name="compare"),
    path("<slug:slug>/population/", views.population_default, name="population_default"),
    path("<slug:slug>/reference-change/", reference_change.reference_change_page, name="reference_change"),
    path(
        "<slug:slug>/reference-change.json",
        reference_change.reference_change_json,
        name="reference_change_json",
    ),
    path("<slug:slug>/planning/", include("scoring.planning.urls")),
    path("<slug:slug>/package.zip", package.package_zip, name="package"),
    path("<slug:slug>/preregistration/", preregistration.preregistration_page, name="preregistration"),
    path(
        "<slug:slug>/preregistration.md",
        preregistration.preregistration_markdown,
        name="preregistration_markdown",
    ),
    path(
        "<slug:slug>/preregistration.json", preregistration.preregistration_json, name="preregistration_json"
    ),
    path("<slug:slug>/runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("<slug:slug>/runs/<int:run_id>/sessions/", session_table.run_sessions, name="run_sessions"),
    path("<slug:slug>/runs/<int:run_id>/meta-evaluation/", views.meta_evaluation, name="meta_evaluation"),
    path("<slug:slug>/runs/<int:run_id>/status.json", views.run_status, name="run_status"),
    path("<slug:slug>/runs/<int:run_id>/default/", views.run_make_default, name="run_make_default"),
    path(
        "<slug:slug>/runs/<int:run_id>/charts/<slug:chart>.json",
        views.chart,
        {"fmt": "json"},
        name="chart_json",
    ),
    path(
        "<slug:slug>/runs/<int:run_id>/charts/<slug:chart>.csv", views.chart, {"fmt": "csv"}, name="chart_csv"
    ),
]
