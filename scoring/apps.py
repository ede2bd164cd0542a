from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Scoring"

    def ready(self):
        from sessionlab import export_members

        from . import receivers  # noqa: F401  (connects the signal receivers)
        from .preregistration.exports import preregistration_member

        export_members.register("preregistration.json", preregistration_member)
