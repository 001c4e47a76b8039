"""Forms for asking questions and uploading batches."""

from __future__ import annotations

from django import forms

from archive.models import SubCorpus


class AskForm(forms.Form):
    question = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Posez votre question…",
                                     "autofocus": True}),
        max_length=2000,
    )
    sub_corpus = forms.ChoiceField(required=False, label="Sub-corpus")
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["sub_corpus"].choices = [("", "All sub-corpora")] + [
            (sc.slug, f"{sc.name} ({sc.get_genre_display()})") for sc in SubCorpus.objects.all()
        ]

    def clean(self):
        data = super().clean()
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            raise forms.ValidationError("The start date is after the end date.")
        return data


class BatchForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    file = forms.FileField(help_text="JSONL (question, optional qid, question_type, gold_ids) "
                                     "or CSV with a 'question' column")
