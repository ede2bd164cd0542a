"""A session played back from its log for the researcher (above assessment: the page decides exclusions)."""
