"""Setting an LLM assessor up: an account that cannot sign in; UMBRELA's prompt by default; unknown
placeholders refused by name; a scale the model's 0-3 cannot map onto refused; nothing written if refused."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from studies.assessment.llm import setup
from studies.assessment.llm.prompts import UMBRELA_PROMPT, grade_map_for, grade_parse, prompt_render
from studies.errors import AssessmentError
from studies.models import GradeLevel, LLMAssessor, StudyAssessor


def create(study, user, **settings):
    return setup.llm_assessor_create(
        study=study,
        created_by=user,
        endpoint_url="http://127.0.0.1:11434/v1",
        model_name="llama3.1:8b",
        **settings,
    )


def test_the_account_cannot_sign_in_and_is_no_researcher(client, assessed_study, alice):
    assessor = create(assessed_study, alice)
    account = assessor.membership.user
    assert not account.has_usable_password() and not account.is_staff
    assert not client.login(username=account.username, password="")
    assert assessor.membership.is_machine
    assert assessor.prompt_template == UMBRELA_PROMPT
    assert assessor.grade_map == {"0": 0, "1": 1, "2": 2, "3": 3}


def test_umbrelas_prompt_renders_and_its_answer_parses():
    rendered = prompt_render(UMBRELA_PROMPT, query="wing", passage="A wing.", description="", narrative="")
    assert "Query: wing\nPassage: A wing.\n" in rendered
    assert rendered.endswith("##final score: score without providing any reasoning.")
    assert grade_parse("M: 2\nT: 1\n##final score: 3") == 3
    assert grade_parse("##Final Score: 2 ... ##final score: 2") == 2
    assert grade_parse("##Final Score: 1 ... ##final score: 2") is None  # two different: malformed
    assert grade_parse("##final score: 7") is None and grade_parse("3") is None


@pytest.mark.parametrize(
    "template, named",
    [
        ("Judge {topic}: {passage}", "unknown placeholder {topic}"),
        ("Judge {query.__class__}: {passage}", "unknown placeholder {query.__class__}"),
        ("Judge {query!r}: {passage}", "{query} takes no format"),
        ("Judge {query}", "must contain {passage}"),
        ("Judge {query: {passage}", "prompt template:"),
    ],
)
def test_a_bad_template_is_refused_by_name_and_nothing_is_made(assessed_study, alice, template, named):
    with pytest.raises(AssessmentError) as refused:
        create(assessed_study, alice, prompt_template=template)
    assert named in str(refused.value)
    assert (
        not LLMAssessor.objects.exists() and not StudyAssessor.objects.filter(study=assessed_study).exists()
    )
    assert not get_user_model().objects.filter(username__startswith="llm-").exists()


def test_description_and_narrative_are_placeholders_too(assessed_study, alice):
    assessor = create(assessed_study, alice, prompt_template="{query}\n{description}\n{narrative}\n{passage}")
    assert assessor.prompt_template.startswith("{query}")


def test_a_scale_that_cannot_be_mapped_is_refused(assessed_study, alice):
    GradeLevel.objects.filter(study=assessed_study, value=3).delete()  # 0, 1, 2: three grades
    with pytest.raises(AssessmentError, match=r"scale \[0, 1, 2\] has 3 non-negative grades"):
        create(assessed_study, alice)
    assert not LLMAssessor.objects.exists()


def test_a_binary_scale_takes_two_and_three_as_relevant():
    assert grade_map_for([0, 1]).mapping == {0: 0, 1: 0, 2: 1, 3: 1}
    assert grade_map_for([0, 1, 2, 3]).mapping == {0: 0, 1: 1, 2: 2, 3: 3}


def test_the_page_shows_a_refusal_beside_the_form(client, alice, assessed_study):
    client.force_login(alice)
    response = client.post(
        reverse("assessment:llm_assessor_add", args=[assessed_study.slug]),
        {
            "endpoint_url": "http://127.0.0.1:11434/v1",
            "model_name": "llama3.1:8b",
            "prompt_template": "Rate {doc}",
            "passage_max_chars": 4000,
            "requests_per_minute": 60,
            "max_retries": 3,
            "timeout_seconds": 60,
            "max_answer_tokens": 200,
            "temperature": 0,
        },
    )
    assert response.status_code == 400
    assert "unknown placeholder {doc}" in response.content.decode()
    assert not LLMAssessor.objects.exists()


def test_a_researcher_sets_one_up_from_the_assessment_page(client, alice, assessed_study):
    client.force_login(alice)
    manage = client.get(reverse("assessment:manage", args=[assessed_study.slug])).content.decode()
    add = reverse("assessment:llm_assessor_add", args=[assessed_study.slug])
    assert add in manage
    form = client.get(add).content.decode()
    assert "##final score" in form  # UMBRELA's prompt, ready to edit
    response = client.post(
        add,
        {
            "endpoint_url": "http://127.0.0.1:11434/v1",
            "model_name": "llama3.1:8b",
            "api_key": "sk-abc",
            "prompt_template": UMBRELA_PROMPT.replace("\n", "\r\n"),  # as a browser posts a textarea
            "passage_max_chars": 4000,
            "requests_per_minute": 60,
            "max_retries": 3,
            "timeout_seconds": 60,
            "max_answer_tokens": 200,
            "temperature": 0,
        },
        follow=True,
    )
    assessor = LLMAssessor.objects.get()
    assert response.redirect_chain[-1][0] == reverse(
        "assessment:llm_assessor", args=[assessed_study.slug, assessor.pk]
    )
    assert "a key is set" in response.content.decode()
    assert assessor.prompt_template == UMBRELA_PROMPT  # the same prompt, the same hash as the default's
    assert (
        assessor.membership.user.username
        in client.get(reverse("assessment:manage", args=[assessed_study.slug])).content.decode()
    )


def test_remove_the_stored_key_is_offered_only_when_a_key_is_stored(
    client, alice, pooled_study, llm_assessor
):
    client.force_login(alice)
    new = client.get(f"/assess/manage/{pooled_study.slug}/llm/add/")
    assert new.status_code == 200 and "Remove the stored key" not in new.content.decode()
    with_key = client.get(f"/assess/manage/{pooled_study.slug}/llm/{llm_assessor.pk}/")
    assert "Remove the stored key" in with_key.content.decode()
    type(llm_assessor).objects.filter(pk=llm_assessor.pk).update(api_key_encrypted="")
    without = client.get(f"/assess/manage/{pooled_study.slug}/llm/{llm_assessor.pk}/")
    assert without.status_code == 200 and "Remove the stored key" not in without.content.decode()
