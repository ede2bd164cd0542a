"""Error reports (the DEBUG page, the 500 e-mails to ADMINS) without the passwords inside URL settings.

Django's filter hides settings whose names look secret (KEY, PASS, TOKEN...), not CELERY_BROKER_URL,
CELERY_RESULT_BACKEND or a cache's LOCATION, whose URLs may carry a Redis or database password
(redis://:password@host). This filter also cleans the user information out of every URL-like value.
"""

import re

from django.views.debug import SafeExceptionReporterFilter

_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


class SettingsFilter(SafeExceptionReporterFilter):
    def cleanse_setting(self, key, value):
        value = super().cleanse_setting(key, value)
        if isinstance(value, str) and "@" in value:
            value = _USERINFO.sub(lambda m: f"{m['scheme']}{self.cleansed_substitute}@", value)
        return value
