"""Forms for asking questions and uploading batches."""

from __future__ import annotations

from django import forms

from archive.models import SubCorpus

QUESTION_MAX_CHARS = 2000


class BoundedTextarea(forms.Textarea):
    """A textarea that shows back at most `max_chars` of a refused value, never all of it."""

    def __init__(self, *, max_chars: int, attrs: dict | None = None) -> None:
        super().__init__(attrs)
        self.max_chars = max_chars

    def format_value(self, value):
        shown = super().format_value(value)
        return shown[:self.max_chars] if shown else shown


class AskForm(forms.Form):
    question = forms.CharField(
        widget=BoundedTextarea(max_chars=QUESTION_MAX_CHARS,
                               attrs={"rows": 3, "placeholder": "Posez votre question…",
                                      "autofocus": True}),
        max_length=QUESTION_MAX_CHARS,
    )
    sub_corpus = forms.ChoiceField(required=False, label="Sub-corpus")
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, archive_range=(None, None), **kwargs):
        super().__init__(*args, **kwargs)
        self.archive_first, self.archive_last = archive_range
        for name in ("date_from", "date_to"):
            attrs = self.fields[name].widget.attrs
            if self.archive_first and self.archive_last:
                attrs["data-archive-first"] = self.archive_first.isoformat()
                attrs["data-archive-last"] = self.archive_last.isoformat()
            attrs["aria-describedby"] = "date-range-note"
        self.fields["sub_corpus"].choices = [("", "All sub-corpora")] + [
            (sc.slug, f"{sc.name} ({sc.get_genre_display()})") for sc in SubCorpus.objects.all()
        ]

    def clean(self):
        data = super().clean()
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and start > end:
            raise forms.ValidationError("The start date is after the end date.")
        first, last = self.archive_first, self.archive_last
        if first and last and ((start and start > last) or (end and end < first)):
            raise forms.ValidationError(
                f"No document is dated in this window: the archive runs from "
                f"{first.isoformat()} to {last.isoformat()}.")
        return data


class BatchForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    file = forms.FileField(help_text="JSONL (question, optional qid, question_type, gold_ids) "
                                     "or CSV with a 'question' column")
