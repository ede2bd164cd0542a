"""Language-model assessors (issue 30): a study's machine assessor, which grades its pools' documents through
an OpenAI-compatible chat-completions endpoint. It holds a StudyAssessor membership of an account that cannot
log in, so its grades are AssessorJudgment rows that agreement reads beside the people's; allocation and
adjudication leave it out (StudyAssessor.PEOPLE), and its grades enter a reference version only by an
explicit rule recorded in the version's provenance. See docs/assessing.md."""

from django.conf import settings
from django.db import models


class LLMAssessor(models.Model):
    """A language model set up as an assessor of one study: where it is served and which model answers."""

    membership = models.OneToOneField("studies.StudyAssessor", on_delete=models.CASCADE, related_name="llm")
    endpoint_url = models.URLField(
        max_length=500, help_text="The server's base URL, e.g. http://127.0.0.1:11434/v1 (Ollama)."
    )
    model_name = models.CharField(max_length=200, help_text="The model the endpoint is asked for.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["membership__study", "id"]

    def __str__(self):
        return f"{self.model_name} assesses {self.membership.study}"
