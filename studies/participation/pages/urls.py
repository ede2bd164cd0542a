from django.urls import path

from studies.participation.pages import answer_views, views

app_name = "participate"

urlpatterns = [
    path("<str:token>/", views.participant_home, name="home"),
    path("<str:token>/consent/", views.consent_submit, name="consent"),
    path("<str:token>/questionnaire/", views.questionnaire_submit, name="questionnaire"),
    path("<str:token>/start/", views.session_start_submit, name="start"),
    path("<str:token>/pre-task/", views.pre_task_submit, name="pre_task"),
    path("<str:token>/gold/", views.gold_submit, name="gold"),
    path("<str:token>/post-task/", views.post_task_submit, name="post_task"),
    path("<str:token>/events/", views.events_submit, name="events"),
    path("<str:token>/answer/", answer_views.answer_submit, name="answer"),
    path("<str:token>/withdraw/", views.withdraw, name="withdraw"),
    path("<str:token>/completion/", views.completion_status, name="completion"),
    path("<str:token>/check/", views.check_submit, name="check"),
]
