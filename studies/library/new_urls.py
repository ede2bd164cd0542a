"""The New-study page (/studies/new/): the library's, since a study built on a collection starts with the
collection's judgments as its reference (studies.library.services.study_create_on_collection)."""

from django.urls import path

from studies.library import views

app_name = "new_study"
urlpatterns = [path("", views.study_create_page, name="study_create")]
