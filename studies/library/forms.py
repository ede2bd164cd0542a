from __future__ import annotations

from django import forms

from studies.models import Collection, CollectionUpload


class UploadForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="How studies will name it, e.g. “Cranfield”.")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    format = forms.ChoiceField(choices=CollectionUpload.FORMATS, initial="cranfield")
    documents = forms.FileField(
        help_text="Cranfield: a zip of the folder (cran.all.1400, cran.qry, cranqrel). "
        "TREC or JSON lines: the documents file, or a zip of several.",
    )
    topics = forms.FileField(
        required=False, help_text="Optional: TREC topics (top, num, title, desc and narr fields)."
    )
    qrels = forms.FileField(
        required=False, help_text="Optional: TREC qrels (topic 0 document grade, one a line)."
    )


class ShareForm(forms.Form):
    username = forms.CharField(max_length=150, label="Share with the researcher")


class AttachForm(forms.Form):
    collection: forms.ModelChoiceField[Collection] = forms.ModelChoiceField(queryset=None, empty_label=None)

    def __init__(self, *args, collections, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = collections
