"""An ``ilike`` lookup: a plain case-insensitive LIKE, where Django's ``icontains`` wraps both
sides in UPPER()."""

from __future__ import annotations

from django.db.models import Lookup


class ILike(Lookup):
    """``field__ilike="%pattern%"``: case-insensitive LIKE, the pattern passed through as is.

    Build patterns from user text with ``common.sql.like_pattern``.
    """

    lookup_name = "ilike"

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} ILIKE {rhs}", [*lhs_params, *rhs_params]
