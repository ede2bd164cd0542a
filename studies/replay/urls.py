"""/studies/<slug>/sessions/<id>/...: a session's replay and the exclusion decided there (replay_views.py)."""

from django.urls import path

from studies.replay import views as replay_views

app_name = "replay"

urlpatterns = [
    path("<int:session_id>/replay/", replay_views.replay, name="session"),
    path("<int:session_id>/exclusion/", replay_views.exclusion, name="exclusion"),
]
