"""The researcher invitation's form."""

from django import forms

from studies.models import Study


class ResearcherInviteForm(forms.Form):
    """Another researcher's account (studies/accounts/services.py: researcher_invite)."""

    username = forms.CharField(
        max_length=150, label="User name", help_text="What they log in with: letters, digits and @.+-_"
    )
    email = forms.EmailField(
        required=False,
        label="E-mail address",
        help_text="Optional; with it they can reset a forgotten password themselves.",
    )
    study = forms.ModelChoiceField(
        queryset=Study.objects.none(),
        required=False,
        label="Add them to a study of yours",
        help_text="Optional: they then see and work on that study with you. Only the owner adds researchers.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["study"].queryset = Study.objects.filter(owner=user).order_by("name")  # type: ignore[attr-defined]
