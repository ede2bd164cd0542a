from django.apps import AppConfig


class StudiesConfig(AppConfig):
    name = "studies"
    verbose_name = "Studies"

    def ready(self):
        # Participation's listeners (the study page's overdue sweep): connected here, as design never imports
        # them.
        from studies.participation.recruitment.sweep import connect_receivers

        connect_receivers()
        # The agreement exclusion rule re-applied when a reference version or finished sessions change its
        # inputs.
        from studies.assessment import exclusion

        exclusion.connect_receivers()
        # The node's search indexes in the readiness report, for operators only (sessionlab/health.py).
        from sessionlab import health
        from studies.search.index_versions import index_health_check

        health.register("search_indexes", index_health_check, informational=True)
