"""Start-up checks of what the offline agent needs: the French parser's package."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Warning, register

from agent.engine.question_parse import INSTALL_STEP, PIPELINE, parser_available
from agent.investigations.judges import LEARNT, judge_in_use


@register()
def french_parser_installed(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Refuse to start without the French parser the offline planner reads questions with."""
    if parser_available():
        return []
    return [Error(f"the French parser {PIPELINE} is not installed",
                  hint=INSTALL_STEP, id="agent.E001")]


@register()
def learnt_judge_loads(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """Say at start-up when the learnt judge's model does not load (the rules judge instead)."""

    if settings.TRACE_JUDGE != LEARNT or judge_in_use().kind == LEARNT:
        return []
    return [Warning(f"the rule judge is in use: {judge_in_use().problem}",
                    hint="train the model with `manage.py train_judge`, or set TRACE_JUDGE=rules",
                    id="agent.W002")]
