"""Researcher accounts: the first one (and any other) made as docs/security.md describes, not by
`createsuperuser`. A researcher is an active account with `is_staff` (the researcher pages and API ask for
it), no superuser flag and no model permissions or groups: the admin is for superusers, and a researcher
granted model permissions there would see every study's rows."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from studies.errors import StudiesError


class AccountError(StudiesError):
    """The account cannot be made as asked; the message says why."""


@transaction.atomic
def researcher_create(*, username: str, email: str = "", password: str | None = None):
    """Create a researcher account. Returns (user, one-time password): the password is generated when none is
    given (tell the researcher; they change it at /accounts/password/), else the one given, checked by the
    project's password validators."""
    username = username.strip()
    user_model = get_user_model()
    if not username:
        raise AccountError("give the researcher a user name")
    if user_model.objects.filter(username=username).exists():
        raise AccountError(f"an account called {username!r} already exists")
    generated = password is None
    password = secrets.token_urlsafe(12) if password is None else password
    candidate = user_model(username=username, email=email.strip())
    if not generated:
        try:
            validate_password(password, candidate)
        except ValidationError as invalid:
            raise AccountError(" ".join(invalid.messages)) from None
    user = user_model.objects.create_user(
        username, email=email.strip(), password=password, is_staff=True, is_superuser=False
    )
    return user, password
