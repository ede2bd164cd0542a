"""The study page's "Copy this study": a form naming the copy, then the service (studies/library/copying.py)
and the new draft's page. Researchers of the study only."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render

from studies.accounts.access import researcher_required, study_for_researcher
from studies.errors import StudiesError
from studies.library import copying


class CopyForm(forms.Form):
    name = forms.CharField(max_length=200, label="Name of the copy")


@researcher_required
def study_copy_page(request, slug):
    study = study_for_researcher(request, slug)
    form = CopyForm(request.POST or None, initial={"name": f"Copy of {study.name}"[:200]})
    if request.method == "POST" and form.is_valid():
        try:
            copy = copying.study_copy(study=study, by=request.user, name=form.cleaned_data["name"])
        except StudiesError as refusal:  # the copy is one transaction: nothing was made
            form.add_error("name" if str(refusal).startswith("name:") else None, str(refusal))
        else:
            messages.success(
                request,
                f"“{copy.name}” is a copy of “{study.name}”'s design and settings, without participants or "
                "data. It is a draft: open it once its set-up checklist passes.",
            )
            return redirect("studies:study_detail", slug=copy.slug)
    return render(request, "studies/study_copy.html", {"study": study, "form": form})
