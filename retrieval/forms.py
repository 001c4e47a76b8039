"""The search page's form."""

from __future__ import annotations

import datetime as dt

from django import forms

from common.search import DateWindow, SearchRequest
from retrieval.services import HYBRID

CHANNEL_CHOICES = [
    (HYBRID, "hybrid (BM25 + dense, RRF)"),
    ("bm25", "BM25 (lexical)"),
    ("dense", "dense (semantic)"),
    ("temporal", "temporal (date window)"),
    ("substring", "substring (exact / OCR-tolerant)"),
]


class SearchForm(forms.Form):
    """Query, channel, sub-corpora, date range and how many documents to show."""

    q = forms.CharField(label="Query", required=False, max_length=500)
    channel = forms.ChoiceField(choices=CHANNEL_CHOICES, initial=HYBRID, required=False)
    sub_corpus = forms.MultipleChoiceField(label="Sub-corpora", required=False,
                                           widget=forms.CheckboxSelectMultiple)
    date_from = forms.DateField(label="From", required=False,
                                widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label="To", required=False,
                              widget=forms.DateInput(attrs={"type": "date"}))
    cap = forms.IntegerField(label="Documents", min_value=1, max_value=100, initial=20,
                             required=False)

    def __init__(self, *args, sub_corpora=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["sub_corpus"].choices = [
            (sc.slug, f"{sc.name} ({sc.get_genre_display()})") for sc in sub_corpora
        ]

    def clean(self):
        data = super().clean()
        start, end = data.get("date_from"), data.get("date_to")
        if start and end and end < start:
            raise forms.ValidationError("The date range ends before it starts.")
        channel = data.get("channel") or HYBRID
        data["channel"] = channel
        if channel == "temporal" and not (start or end):
            raise forms.ValidationError("A temporal search needs a date (from and/or to).")
        if channel != "temporal" and not (data.get("q") or "").strip():
            raise forms.ValidationError("Type a query.")
        return data

    def window(self) -> DateWindow | None:
        """Return the date window of the filters, if any."""
        start: dt.date | None = self.cleaned_data.get("date_from")
        end: dt.date | None = self.cleaned_data.get("date_to")
        if start is None:
            return None if end is None else DateWindow.around(end)
        return DateWindow(start, end if end is not None else start)

    def search_request(self) -> SearchRequest:
        """Return the search the valid form asks for (channel "hybrid" is the page's fusion)."""
        data = self.cleaned_data
        return SearchRequest(
            channel=data["channel"], query=data["q"] or "", window=self.window(),
            sub_corpora=data["sub_corpus"] or None, limit=data["cap"] or 20,
        )
