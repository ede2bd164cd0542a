"""The planner's routes, under /scoring/<slug>/planning/ in scoring's namespace (scoring/urls.py includes
them)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.planner, name="planning"),
    path("<int:plan_id>/", views.plan_detail, name="planning_plan"),
    path("<int:plan_id>/status.json", views.plan_status, name="planning_status"),
    path("<int:plan_id>/curve.json", views.plan_chart, name="planning_chart"),
    path("<int:plan_id>/curve.csv", views.plan_csv, name="planning_csv"),
]
