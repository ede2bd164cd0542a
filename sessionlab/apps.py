from django.apps import AppConfig


class SessionLabConfig(AppConfig):
    name = "sessionlab"
    verbose_name = "SessionLab"

    def ready(self):
        from . import checks  # noqa: F401 (registers the project's system checks)
