"""Creating and changing a study's LLM assessor: the account that cannot log in, its membership, the
settings, and the API key (encrypted; never read back here)."""

from __future__ import annotations

import re
import urllib.parse

from django.contrib.auth import get_user_model
from django.db import transaction

from studies.assessment.llm.keys import api_key_encrypt
from studies.assessment.llm.limits import RANGES, prompt_template_max_chars
from studies.assessment.llm.prompts import UMBRELA_PROMPT, grade_map_for, template_check
from studies.errors import AssessmentError, AssessorSettingError
from studies.models import AuditAction, AuditEntry, LLMAssessor, Study, StudyAssessor

# What a researcher sets on the form, besides endpoint, model and key.
SETTINGS = (
    "prompt_template",
    "passage_max_chars",
    "requests_per_minute",
    "max_retries",
    "timeout_seconds",
    "max_answer_tokens",
    "temperature",
    "price_input_per_million",
    "price_output_per_million",
    "cost_cap",
    "token_cap",
)
# Everything a researcher may change, in the order an audit entry lists the changes.
EDITABLE = ("endpoint_url", "model_name", *SETTINGS)


def _settings_checked(endpoint_url: str, model_name: str, settings: dict) -> dict:
    parts = urllib.parse.urlsplit(endpoint_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AssessorSettingError(
            f"endpoint {endpoint_url!r}: an http or https base URL, e.g. http://127.0.0.1:11434/v1",
            field="endpoint_url",
        )
    if parts.username or parts.password:
        raise AssessorSettingError(
            "endpoint: put the API key in its own field, not in the URL", field="endpoint_url"
        )
    if "?" in endpoint_url or "#" in endpoint_url:
        # A query or a fragment would cut the chat path off ("...?" + "/chat/completions").
        raise AssessorSettingError(
            "endpoint: a base URL without a query (?) or fragment (#); requests go to it + /chat/completions",
            field="endpoint_url",
        )
    if not model_name.strip():
        raise AssessorSettingError(
            "model: name the model the endpoint serves, e.g. llama3.1:8b", field="model_name"
        )
    unknown = set(settings) - set(SETTINGS)
    if unknown:
        raise AssessmentError(f"unknown settings: {', '.join(sorted(unknown))}")
    settings = dict(settings)
    settings["prompt_template"] = settings.get("prompt_template") or UMBRELA_PROMPT
    _bounds_checked(settings)
    try:
        template_check(settings["prompt_template"])
    except AssessmentError as error:
        raise AssessorSettingError(str(error), field="prompt_template") from None
    priced = [settings.get("price_input_per_million"), settings.get("price_output_per_million")]
    if settings.get("cost_cap") is not None and None in priced:
        raise AssessorSettingError(
            "cost cap: give both prices per million tokens, or cap tokens instead", field="cost_cap"
        )
    return settings


def _bounds_checked(settings: dict) -> None:
    """limits.py's bounds, whoever calls the service (the form checks them too, for the page's message)."""
    most = prompt_template_max_chars()
    if len(settings["prompt_template"]) > most:
        raise AssessorSettingError(
            f"prompt template: {len(settings['prompt_template']):,} characters, more than the {most:,} "
            "allowed (LLM_PROMPT_TEMPLATE_MAX_CHARS)",
            field="prompt_template",
        )
    for name, (least, highest) in RANGES.items():
        value = settings.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not least <= value <= highest:
            raise AssessorSettingError(f"{name}: {value!r} is not from {least} to {highest}", field=name)


def _account_name(study: Study, model_name: str) -> str:
    stem = re.sub(r"[^\w.+-]+", "-", model_name).strip("-")[:60] or "model"
    base = f"llm-{study.pk}-{stem}"
    users = get_user_model().objects
    name, n = base, 1
    while users.filter(username=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


@transaction.atomic
def llm_assessor_create(
    *, study: Study, created_by, endpoint_url: str, model_name: str, api_key: str = "", **settings
) -> LLMAssessor:
    """A machine assessor of `study`: an account with an unusable password (no one signs in as it, it is not
    staff), its StudyAssessor membership, and the LLMAssessor with its settings. Refused, with nothing
    written, for a grade scale the model's 0-3 cannot map onto, or settings that do not hold."""
    grade_map = grade_map_for(study.grade_values())
    settings = _settings_checked(endpoint_url, model_name, settings)
    account = get_user_model().objects.create_user(_account_name(study, model_name), password=None)
    membership = StudyAssessor.objects.create(study=study, user=account, invited_by=created_by)
    assessor = LLMAssessor.objects.create(
        membership=membership,
        endpoint_url=endpoint_url,
        model_name=model_name.strip(),
        created_by=created_by,
        api_key_encrypted=api_key_encrypt(api_key) if api_key else "",
        grade_map=grade_map.as_json(),
        **settings,
    )
    AuditEntry.objects.create(
        study=study,
        action=AuditAction.LLM_ASSESSOR_CREATED,
        detail={
            "assessor": account.get_username(),
            "model": assessor.model_name,
            "endpoint_host": endpoint_host(endpoint_url),
            "key": "key set" if api_key else "no key",
            "by": getattr(created_by, "username", ""),
        },
    )
    return assessor


def endpoint_target(endpoint_url: str) -> tuple[str, str, int | None, str]:
    """Where a key is sent: scheme, host, port (the scheme's default when none is written) and path (without
    trailing slashes). A stored key is bound to it: see `llm_assessor_update`."""
    parts = urllib.parse.urlsplit(endpoint_url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").rstrip("."), port, parts.path.rstrip("/")


def endpoint_host(endpoint_url: str) -> str:
    """The endpoint's host, all an audit entry or a provenance says of it (its path or query may hold a
    token)."""
    return urllib.parse.urlsplit(endpoint_url).hostname or ""


@transaction.atomic
def llm_assessor_update(
    *,
    assessor: LLMAssessor,
    endpoint_url: str,
    model_name: str,
    api_key: str = "",
    clear_api_key: bool = False,
    changed_by=None,
    **settings,
) -> LLMAssessor:
    """Change the settings. The key stays as it is unless a new one is given (`api_key`) or it is cleared
    (`clear_api_key`), or the endpoint moves: a stored key is bound to where it is sent (scheme, host, port
    and path), so an endpoint change without a new key in the same request clears it ("key cleared
    (endpoint changed)" in the audit entry): whoever may edit the settings must not be able to send the
    owner's key to a server of their own. The grade map follows the study's scale as it is now. A change
    leaves an audit entry naming the fields changed (and "key replaced" or "key cleared", never a key); no
    change leaves none."""
    assessor = (
        LLMAssessor.objects.select_for_update()
        .select_related("membership__study", "membership__user")
        .get(pk=assessor.pk)
    )
    study = assessor.membership.study
    grade_map = grade_map_for(study.grade_values())
    settings = _settings_checked(endpoint_url, model_name, settings)
    settings |= {"endpoint_url": endpoint_url, "model_name": model_name.strip()}
    changed = [name for name in EDITABLE if getattr(assessor, name) != settings[name]]
    moved = endpoint_target(assessor.endpoint_url) != endpoint_target(endpoint_url)
    old_host = endpoint_host(assessor.endpoint_url)
    for name in changed:
        setattr(assessor, name, settings[name])
    key = ""
    if api_key:
        assessor.api_key_encrypted, key = api_key_encrypt(api_key), "key replaced"
    elif moved and assessor.api_key_encrypted:
        assessor.api_key_encrypted, key = "", "key cleared (endpoint changed)"
    elif clear_api_key and assessor.api_key_encrypted:
        assessor.api_key_encrypted, key = "", "key cleared"
    assessor.grade_map = grade_map.as_json()
    assessor.save()
    if changed or key:
        AuditEntry.objects.create(
            study=study,
            action=AuditAction.LLM_ASSESSOR_CHANGED,
            detail={
                "assessor": assessor.membership.user.get_username(),
                "fields": changed,
                **({"key": key} if key else {}),
                **({"endpoint_host": [old_host, endpoint_host(endpoint_url)]} if moved else {}),
                "by": getattr(changed_by, "username", ""),
            },
        )
    return assessor
