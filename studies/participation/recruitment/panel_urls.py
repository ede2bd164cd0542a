from django.urls import path

from studies.participation.recruitment import panel_views

app_name = "panel"

urlpatterns = [
    path("<str:public_token>/", panel_views.join, name="join"),
    path("<str:public_token>/status/", panel_views.panel_status, name="status"),
    path("<str:public_token>/resume/", panel_views.resume, name="resume"),
]
