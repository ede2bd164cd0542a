"""/studies/<slug>/copy/: copy a study's design into a new draft (studies/library/copy_views.py)."""

from django.urls import path

from studies.library import copy_views

app_name = "copying"
urlpatterns = [
    path("", copy_views.study_copy_page, name="study_copy"),
]
