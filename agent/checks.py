"""Start-up checks of what the offline agent needs: the French parser's package."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register

from agent.engine.question_parse import INSTALL_STEP, PIPELINE, parser_available


@register()
def french_parser_installed(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Refuse to start without the French parser the offline planner reads questions with."""
    if parser_available():
        return []
    return [Error(f"the French parser {PIPELINE} is not installed",
                  hint=INSTALL_STEP, id="agent.E001")]
