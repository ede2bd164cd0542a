"""One view pattern for the form pages: bind a form, call a service, flash the outcome, redirect.

A page posts a form; `form_post` validates it, calls `action(cleaned_data)` (the service call), flashes
`success(result)` or the refusal, and redirects. Refusals are the exceptions the caller names in `refusals`
(the apps pass their own hierarchy, e.g. studies.errors.StudiesError, never ValueError: a bug must stay a
500, not turn into a polite message). The project package takes them as a parameter so that it imports
nothing of the apps here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.forms import Form
from django.http import HttpRequest, HttpResponse


def flash_form_errors(request: HttpRequest, form: Form, label: str = "") -> None:
    """One message per invalid field: "<label><field>: <errors>"."""
    for name, errors in form.errors.items():
        messages.error(request, f"{label}{name}: {' '.join(map(str, errors))}")


def form_post(
    request: HttpRequest,
    form: Form,
    action: Callable[[dict], Any],
    *,
    refusals: tuple[type[BaseException], ...],
    success: str | Callable[[Any], str | None] | None,
    redirect_to: HttpResponse,
    refused_to: HttpResponse | None = None,
    refusal_text: Callable[[BaseException], str] = str,
    error_label: str = "",
    atomic: bool = False,
) -> HttpResponse:
    """Validate the bound `form`; if valid call `action(form.cleaned_data)` (in a transaction with `atomic`).

    - invalid form: each field's errors flashed (`error_label` before the field name), `refused_to`;
    - a refusal (an exception of `refusals`): `refusal_text(exc)` flashed as an error, `refused_to`;
    - success: `success` (a text, or a function of the action's result; None or "" flashes nothing)
      flashed, `redirect_to`.
    `refused_to` defaults to `redirect_to`."""
    refused_to = refused_to if refused_to is not None else redirect_to
    if not form.is_valid():
        flash_form_errors(request, form, error_label)
        return refused_to
    try:
        if atomic:
            with transaction.atomic():
                result = action(form.cleaned_data)
        else:
            result = action(form.cleaned_data)
    except refusals as exc:
        messages.error(request, refusal_text(exc))
        return refused_to
    text = success(result) if callable(success) else success
    if text:
        messages.success(request, text)
    return redirect_to
