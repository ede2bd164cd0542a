"""The access checks of researcher pages: every room with such pages imports them from here (healthchecks'
decorators module), and the reads of what a researcher may see."""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from studies.models import Study


def researcher_required(view):
    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied("Researcher pages are for researcher accounts.")
        return view(request, *args, **kwargs)

    return wrapper


def studies_visible_to(user):
    """Studies a researcher may see: those they own or were added to; everything for superusers."""
    if user.is_superuser:
        return Study.objects.all()
    return Study.objects.filter(researchers=user).distinct()


def panel_ids_visible_to(*, user, study: Study) -> bool:
    """Whether the user is given the study's panel ids (they identify people on the panel): its owner alone,
    not a co-researcher, nor a superuser who does not own it (studies/interchange/panel_ids.py)."""
    return user is not None and user.is_authenticated and study.owner_id == user.pk


def study_for_researcher(request, slug):
    # 404, not 403: a researcher of another study need not learn that this one exists.
    return get_object_or_404(studies_visible_to(request.user), slug=slug)
