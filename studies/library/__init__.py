"""Collections from the browser: upload, import and index (by Celery tasks), list, share, delete."""
