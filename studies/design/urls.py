from django.urls import path

from studies.design import views

app_name = "studies"
urlpatterns = [
    path("", views.study_list, name="study_list"),
    path("new/", views.study_create, name="study_create"),
    path("<slug:slug>/", views.study_detail, name="study_detail"),
    path("<slug:slug>/scenarios/add/", views.scenario_add, name="scenario_add"),
    path("<slug:slug>/systems/add/", views.system_add, name="system_add"),
    path("<slug:slug>/participants/enrol/", views.participants_enrol, name="participants_enrol"),
]
