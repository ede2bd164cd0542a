"""The study's downloads, under /studies/<slug>/downloads/ (included beside studies.design.urls)."""

from django.urls import path

from studies.interchange import views

app_name = "exports"
urlpatterns = [
    path("<slug:slug>/downloads/", views.downloads, name="downloads"),
    path("<slug:slug>/downloads/archive.json", views.archive, name="archive"),
    path("<slug:slug>/downloads/tables.zip", views.tidy_csv, name="tidy_csv"),
    path("<slug:slug>/downloads/runs-<str:unit>.zip", views.runs, name="runs"),
    path("<slug:slug>/downloads/reference-v<int:number>.qrels", views.qrels, name="qrels"),
    path("<slug:slug>/downloads/session-track.xml", views.session_track, name="session_track"),
    path("<slug:slug>/downloads/agreement.csv", views.agreement_csv, name="agreement_csv"),
    path("<slug:slug>/downloads/panel-ids.csv", views.panel_ids_csv, name="panel_ids_csv"),
]
