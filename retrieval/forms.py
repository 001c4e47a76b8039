"""The search page's form."""

from __future__ import annotations

import datetime as dt

from django import forms

from archive import params
from common.search import DateWindow, SearchRequest
from retrieval.services import HYBRID

CHANNEL_CHOICES = [
    (HYBRID, "hybrid (BM25 + dense, RRF)"),
    ("bm25", "BM25 (lexical)"),
    ("dense", "dense (semantic)"),
    ("temporal", "temporal (date window)"),
    ("substring", "substring (exact / OCR-tolerant)"),
]


# Documents imported as text have no OCR confidence: the filter keeps them unless asked not to.
UNRATED_KEEP, UNRATED_DROP = "keep", "drop"


class SearchForm(forms.Form):
    """Query, channel, sub-corpora, date range and how many documents to show."""

    q = forms.CharField(label="Query", required=False, max_length=500)
    channel = forms.ChoiceField(choices=CHANNEL_CHOICES, initial=HYBRID, required=False)
    sub_corpus = forms.MultipleChoiceField(label="Sub-corpora", required=False,
                                           widget=forms.CheckboxSelectMultiple)
    date_from = params.DateField(label="From", required=False,
                                widget=forms.DateInput(attrs={"type": "date"}))
    date_to = params.DateField(label="To", required=False,
                              widget=forms.DateInput(attrs={"type": "date"}))
    cap = params.IntegerField(label="Documents", min_value=1, max_value=100, initial=20,
                             required=False)
    min_confidence = params.IntegerField(
        label="Min. OCR confidence (%)", min_value=0, max_value=100, required=False,
        help_text="The mean confidence of a scanned document's words, from its ALTO pages.")
    unrated = forms.ChoiceField(
        label="Documents without a confidence", initial=UNRATED_KEEP, required=False,
        choices=[(UNRATED_KEEP, "kept"), (UNRATED_DROP, "left out")])

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

    def confidence_floor(self) -> tuple[float | None, bool]:
        """(the minimum mean OCR confidence asked, 0-1 or None; whether unrated documents stay)."""
        percent = self.cleaned_data.get("min_confidence")
        keep = (self.cleaned_data.get("unrated") or UNRATED_KEEP) == UNRATED_KEEP
        return (percent / 100 if percent is not None else None), keep

    def search_request(self) -> SearchRequest:
        """Return the search the valid form asks for (channel "hybrid" is the page's fusion)."""
        data = self.cleaned_data
        return SearchRequest(
            channel=data["channel"], query=data["q"] or "", window=self.window(),
            sub_corpora=data["sub_corpus"] or None, limit=data["cap"] or 20,
        )
