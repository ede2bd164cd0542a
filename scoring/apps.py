from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Scoring"

    def ready(self):
        from . import receivers  # noqa: F401  (connects the signal receivers)
