"""Creating and changing a study's LLM assessor: the account that cannot log in, its membership, the
settings, and the API key (encrypted; never read back here)."""

from __future__ import annotations

import re
import urllib.parse

from django.contrib.auth import get_user_model
from django.db import transaction

from studies.assessment.llm.keys import api_key_encrypt
from studies.assessment.llm.prompts import UMBRELA_PROMPT, grade_map_for, template_check
from studies.errors import AssessmentError
from studies.models import LLMAssessor, Study, StudyAssessor

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


def _settings_checked(endpoint_url: str, model_name: str, settings: dict) -> dict:
    parts = urllib.parse.urlsplit(endpoint_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AssessmentError(
            f"endpoint {endpoint_url!r}: an http or https base URL, e.g. http://127.0.0.1:11434/v1"
        )
    if parts.username or parts.password:
        raise AssessmentError("endpoint: put the API key in its own field, not in the URL")
    if not model_name.strip():
        raise AssessmentError("model: name the model the endpoint serves, e.g. llama3.1:8b")
    unknown = set(settings) - set(SETTINGS)
    if unknown:
        raise AssessmentError(f"unknown settings: {', '.join(sorted(unknown))}")
    settings = dict(settings)
    settings["prompt_template"] = settings.get("prompt_template") or UMBRELA_PROMPT
    template_check(settings["prompt_template"])
    priced = [settings.get("price_input_per_million"), settings.get("price_output_per_million")]
    if settings.get("cost_cap") is not None and None in priced:
        raise AssessmentError("cost cap: give both prices per million tokens, or cap tokens instead")
    return settings


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
    return LLMAssessor.objects.create(
        membership=membership,
        endpoint_url=endpoint_url,
        model_name=model_name.strip(),
        created_by=created_by,
        api_key_encrypted=api_key_encrypt(api_key) if api_key else "",
        grade_map=grade_map.as_json(),
        **settings,
    )


@transaction.atomic
def llm_assessor_update(
    *,
    assessor: LLMAssessor,
    endpoint_url: str,
    model_name: str,
    api_key: str = "",
    clear_api_key: bool = False,
    **settings,
) -> LLMAssessor:
    """Change the settings. The key stays as it is unless a new one is given (`api_key`) or it is cleared
    (`clear_api_key`); the grade map follows the study's scale as it is now."""
    assessor = LLMAssessor.objects.select_for_update().select_related("membership__study").get(pk=assessor.pk)
    grade_map = grade_map_for(assessor.membership.study.grade_values())
    settings = _settings_checked(endpoint_url, model_name, settings)
    assessor.endpoint_url, assessor.model_name = endpoint_url, model_name.strip()
    for name, value in settings.items():
        setattr(assessor, name, value)
    if api_key:
        assessor.api_key_encrypted = api_key_encrypt(api_key)
    elif clear_api_key:
        assessor.api_key_encrypted = ""
    assessor.grade_map = grade_map.as_json()
    assessor.save()
    return assessor
