"""The REST API (Django REST framework): researchers' resources under /api/studies/, the participant's log
ingestion under /api/participant/. See docs/api.md."""
