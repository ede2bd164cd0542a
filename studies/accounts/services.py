"""Researcher accounts: the first one made as docs/security.md describes (`manage.py create_researcher`), not
by `createsuperuser`, and the others by the command or invited by a researcher from the pages
(`researcher_invite`). A researcher is an active account with `is_staff` (the researcher pages and API ask for
it), no superuser flag and no model permissions or groups: the admin is for superusers, and a researcher
granted model permissions there would see every study's rows."""

from __future__ import annotations

import logging
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from studies.errors import StudiesError
from studies.models import Study

logger = logging.getLogger(__name__)


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
    try:  # the rule of Django's own forms (letters, digits and @.+-_), which create_user does not apply
        user_model.username_validator(username)
    except ValidationError as invalid:
        raise AccountError(f"{username!r}: {' '.join(invalid.messages)}") from None
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


@transaction.atomic
def researcher_invite(*, by, username: str, email: str = "", study: Study | None = None):
    """A researcher makes another researcher's account from the pages: the account
    `researcher_create` makes, with a one-time password, and, when `study` is given, the new researcher added
    to it. Any researcher may invite (a new researcher sees only the studies they own or are added to); only
    a study's owner adds researchers to it. Returns (user, one-time password)."""
    if not (by.is_active and by.is_staff):
        raise AccountError("only a researcher invites researchers")
    if study is not None and study.owner_id != by.pk:
        raise AccountError(f"only the owner of “{study.name}” adds researchers to it")
    if email.strip():
        try:
            validate_email(email.strip())
        except ValidationError:
            raise AccountError(f"{email.strip()!r} is not an e-mail address") from None
    user, password = researcher_create(username=username, email=email)
    if study is not None:
        study.researchers.add(user)
    logger.info(
        "researcher %s invited by %s%s",
        user.username,
        by.get_username(),
        f" to {study.slug}" if study else "",
    )
    return user, password
