"""/favicon.ico: browsers ask for it whatever a page links (a PDF viewer, a bookmark, an old browser), so it
answers with the site's icon rather than a 404. The pages link static/favicon.svg themselves (base.html)."""

from django.shortcuts import redirect
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe


@require_safe
@cache_control(max_age=86400, public=True)
def favicon(request):
    # Not permanent: with DEBUG off the static name carries the file's hash, which changes with the icon.
    return redirect(static("favicon.svg"))
