"""Every text a model stores fits its column, checked in one place before any row is written.

A ``CharField`` is a ``varchar(max_length)`` in PostgreSQL: a longer value would fail inside the
database (a 500). ``check_fits`` runs on every model's ``pre_save`` (registered by the archive app,
the lowest one, so it covers every app's models and the admin) and raises ``FieldTooLong``, a
``BadRequest``: a request that brings such a value gets a 400 naming the field, nothing written.
Services that can say more (which form field, what to do) call ``too_long`` first; ``fitted``
shortens a value the site chose itself (a batch named after its file) to its column.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import BadRequest
from django.db import models
from django.db.models.signals import pre_save


class FieldTooLong(BadRequest):
    """A value longer than its model field allows."""


def _limit(model: type[models.Model], name: str) -> int | None:
    field = model._meta.get_field(name)
    return getattr(field, "max_length", None)


def too_long(model: type[models.Model], /, **values: Any) -> str:
    """Return why the first value longer than its field (by name) does not fit, or ''."""
    for name, value in values.items():
        limit = _limit(model, name)
        if limit is not None and isinstance(value, str) and len(value) > limit:
            label = str(getattr(model._meta.get_field(name), "verbose_name", name))
            return (f"The {label} has {len(value):,} characters; at most {limit:,}. "
                    "Nothing was saved.")
    return ""


def fitted(model: type[models.Model], name: str, value: str) -> str:
    """Shorten a value the site chose (not the user) to what its field holds."""
    limit = _limit(model, name)
    return value if limit is None else value[:limit]


def check_fits(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    """Refuse to save a row whose text does not fit its columns (a pre_save receiver)."""
    values = {field.name: getattr(instance, field.attname, None)
              for field in sender._meta.concrete_fields
              if isinstance(field, models.CharField) and field.max_length}
    if problem := too_long(sender, **values):
        raise FieldTooLong(problem)


def register() -> None:
    """Check every model's rows before they are saved."""
    pre_save.connect(check_fits, weak=False, dispatch_uid="archive.field_limits.check_fits")
