"""Reads of participation that the tasks need: which studies the overdue sweep visits."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from studies.models import Study
from studies.participation.recruitment.states import ENDED


def studies_to_sweep(*, study_id: int | None = None) -> QuerySet[Study]:
    """The studies the overdue sweep (recruitment.study_sweep) visits, by id: the one given, or every study
    that may hold something overdue (a session still open under a time limit, or a participant not yet ended
    under a recruitment time limit)."""
    if study_id is not None:
        return Study.objects.filter(pk=study_id).order_by("pk")
    open_session = Q(
        participants__assignments__session__isnull=False,
        participants__assignments__session__ended_at__isnull=True,
        time_limit_minutes__isnull=False,
    )
    live = Q(recruitment__time_limit_minutes__isnull=False) & ~Q(participants__state__in=ENDED)
    return Study.objects.filter(open_session | live).distinct().order_by("pk")
