from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from studies.api import urls as studies_api_urls
from studies.design import views as study_views

from . import api_docs, api_errors, docs_views, favicon_views
from .auth_views import LoginView, PasswordResetView

# One `api` namespace: the studies' resources and, under each study, scoring's runs, put together here so
# that studies never names the scoring app.
api_urls: tuple[list[URLPattern | URLResolver], str] = (
    [
        *studies_api_urls.urlpatterns,
        path("studies/<int:study_pk>/scoring-runs/", include("scoring.api_urls")),
    ],
    studies_api_urls.app_name,
)

urlpatterns = [
    path("", study_views.home, name="home"),
    path("favicon.ico", favicon_views.favicon, name="favicon"),  # the pages link static/favicon.svg
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(), name="login"),  # rate-limited (sessionlab/ratelimit.py)
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Any account changes its password here (assessors and researchers get a one-time one: docs/security.md).
    path("accounts/password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    # A forgotten password: a link by e-mail (EMAIL_BACKEND; docs/security.md, "Making accounts"), limited.
    path("accounts/password/reset/", PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"
    ),
    # The documentation, served so that forms' help can link to it (sessionlab/docs_views.py).
    path("docs/", docs_views.doc_index, name="docs_index"),
    path("docs/<slug:name>/", docs_views.doc_page, name="doc_page"),
    path("docs/img/<str:name>", docs_views.doc_image, name="doc_image"),
    path("studies/new/", include("studies.library.new_urls")),  # before the study pages' <slug>/
    path("studies/", include("studies.design.urls")),
    path("studies/<slug:slug>/recruitment/", include("studies.participation.recruitment.urls")),
    path("studies/<slug:slug>/copy/", include("studies.library.copy_urls")),  # its design, in a new draft
    path("studies/<slug:slug>/sessions/", include("studies.replay.urls")),  # a session replayed
    path("studies/", include("studies.interchange.urls")),  # the study's downloads
    path(
        "collections/", include("studies.library.urls")
    ),  # upload, import, index, share (docs/setting-up-a-study.md)
    path("scoring/", include("scoring.urls")),
    path("assess/", include("studies.assessment.urls")),
    path("p/", include("studies.participation.pages.urls")),
    # public links and the panel's notifications
    path("join/", include("studies.participation.recruitment.panel_urls")),
    path("api/", include(api_urls)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script as a file (?script), not inline: our CSP
    # (sessionlab/csp.py).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    # ReDoc's bundle without the logo it would fetch from Redocly's CDN (sessionlab/api_docs.py).
    path("api/redoc/redoc.standalone.js", api_docs.redoc_script, name="api-redoc-script"),
    # Last: any other /api/ URL is a JSON 404, not the HTML page (the pages elsewhere keep theirs).
    re_path(r"^api/", api_errors.not_found, name="api-not-found"),
]
