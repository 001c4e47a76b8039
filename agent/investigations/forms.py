"""Forms for asking questions and uploading batches."""

from __future__ import annotations

from django import forms

from agent.investigations.services import RunChoices
from agent.policies import (
    ADJUSTABLE_SETTINGS,
    available_models,
    available_policies,
    endpoint_configured,
    engine_config,
)
from archive import params
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


class RestrictionForm(forms.Form):
    """Where an investigation searches: one sub-corpus or all, and a date window."""

    sub_corpus = forms.ChoiceField(required=False, label="Sub-corpus")
    date_from = params.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = params.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

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


class AskForm(RestrictionForm):
    question = forms.CharField(
        widget=BoundedTextarea(max_chars=QUESTION_MAX_CHARS,
                               attrs={"rows": 3, "placeholder": "Posez votre question…",
                                      "autofocus": True}),
        max_length=QUESTION_MAX_CHARS,
    )


class RunAgainForm(RestrictionForm):
    """Run an investigation (or a batch) again: another policy, model, settings or restriction.

    Prefilled from the first run; offers only the policies and models this instance can run.
    """

    policy = forms.ChoiceField(label="Policy")
    agent_model = forms.ChoiceField(required=False, label="Model (agent role: the verdicts)")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["policy"].choices = [(p.value, p.label) for p in available_policies()]
        models = available_models() if endpoint_configured() else []
        self.fields["agent_model"].choices = [(name, name) for name in models]
        if not models:
            self.fields["agent_model"].widget = forms.HiddenInput()
        for setting in ADJUSTABLE_SETTINGS:
            self.fields[setting.name] = params.IntegerField(
                label=setting.label, min_value=setting.minimum, max_value=setting.maximum)

    @classmethod
    def initial_from(cls, investigation) -> dict:
        """The first run's choices, as the form's initial values."""
        config = engine_config(investigation.engine_settings)
        return {
            "policy": investigation.policy,
            "agent_model": investigation.models_used.get("agent", ""),
            "sub_corpus": investigation.sub_corpus, "date_from": investigation.date_from,
            "date_to": investigation.date_to,
            **{setting.name: getattr(config, setting.name) for setting in ADJUSTABLE_SETTINGS},
        }

    def setting_fields(self):
        return [self[setting.name] for setting in ADJUSTABLE_SETTINGS]

    def choices(self, first) -> RunChoices:
        """The choices to run with; a setting is kept only where it differs from the first run."""
        data = self.cleaned_data
        config = engine_config(first.engine_settings)
        changed = {setting.name: data[setting.name] for setting in ADJUSTABLE_SETTINGS
                   if data[setting.name] != getattr(config, setting.name)}
        return RunChoices(policy=data["policy"], agent_model=data.get("agent_model") or "",
                          settings=changed, sub_corpus=data.get("sub_corpus") or "",
                          date_from=data.get("date_from"), date_to=data.get("date_to"))


class BatchForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    file = forms.FileField(help_text="JSONL (question, optional qid, question_type, gold_ids) "
                                     "or CSV with a 'question' column")


class InvestigationFileForm(forms.Form):
    file = forms.FileField(label="Investigation file",
                           help_text="a .trace.json file downloaded from an investigation's "
                                     "review page (or written by manage.py export_investigation)")
