"""`{% preregistration_note study %}`: the scoring pages' line on the study's pre-registration and its
deviations. A template tag, so the dashboards' views need not import the pre-registration (which reads the
power plans, which draw with the dashboards' helpers: a cycle)."""

from django import template

from ..preregistration.services import preregistration_note as note_context

register = template.Library()


@register.inclusion_tag("scoring/_preregistration_note.html")
def preregistration_note(study):
    return {"study": study, **note_context(study)}
