"""Template filters that keep untrusted addresses from becoming live links."""

from __future__ import annotations

from django import template

from common.links import link_target

register = template.Library()


@register.filter
def safe_url(address: object) -> str:
    """Return the address to put in an href, or "" when it must be shown as text only.

    Use: ``{% with href=document.url|safe_url %}{% if href %}<a href="{{ href }}">…``.
    """
    return link_target(address) or ""
