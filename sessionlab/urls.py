from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from studies import views as study_views

from .auth_views import LoginView

urlpatterns = [
    path("", study_views.home, name="home"),
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(), name="login"),  # rate-limited (sessionlab/ratelimit.py)
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("studies/", include("studies.urls")),
    path("scoring/", include("scoring.urls")),
    path("assess/", include("studies.assessment_urls")),
    path("p/", include("studies.participant_urls")),
    path("api/", include("studies.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script as a file (?script), not inline: our CSP (sessionlab/csp.py).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
]
