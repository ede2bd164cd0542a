from django.urls import path

from studies.participation.recruitment import views as recruitment_views

app_name = "recruitment"

urlpatterns = [
    path("", recruitment_views.recruitment_settings, name="settings"),
    path("reconciliation/", recruitment_views.reconciliation_page, name="reconciliation"),
    path("import/", recruitment_views.export_import, name="import"),
    path("typed-codes/", recruitment_views.typed_codes, name="typed_codes"),
]
