"""The researcher's page for inviting another researcher. Thin: the form, the service
(studies/accounts/services.py: researcher_invite), and the one-time password shown once, on this answer only
(never in a message, which the session would keep)."""

from django.shortcuts import render

from studies.accounts.access import researcher_required
from studies.accounts.forms import ResearcherInviteForm
from studies.accounts.services import AccountError, researcher_invite


@researcher_required
def researcher_invite_page(request):
    form = ResearcherInviteForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            user, password = researcher_invite(
                by=request.user, username=data["username"], email=data["email"], study=data["study"]
            )
        except AccountError as refusal:
            form.add_error(None, str(refusal))
        else:
            invited = {"user": user, "password": password, "study": data["study"]}
            return render(request, "studies/researcher_invite.html", {"form": None, "invited": invited})
    status = 400 if form.is_bound else 200
    return render(request, "studies/researcher_invite.html", {"form": form}, status=status)
