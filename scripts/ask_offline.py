"""Run one question through the offline engine on the archive and print what it decided.

Usage: python scripts/ask_offline.py "Quelle mesure ... ?"

Prints the sub-questions, then every accepted source with its rationale and evidence span.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trace_site.settings")

import django  # noqa: E402

django.setup()

from agent.engine.investigation import run_investigation  # noqa: E402
from agent.engine.offline import OfflinePolicy  # noqa: E402
from agent.engine.sinks import ListSink  # noqa: E402
from agent.investigations.retriever import ArchiveRetriever  # noqa: E402


def main() -> None:
    """Print the plan and the accepted sources of one offline investigation."""
    if len(sys.argv) != 2 or not sys.argv[1].strip():
        raise SystemExit('usage: python scripts/ask_offline.py "question"')
    sink = ListSink()
    result = run_investigation(sys.argv[1], policy=OfflinePolicy(), retriever=ArchiveRetriever(),
                               sink=sink)
    for event in sink.of("plan"):
        for sub_question in event.sub_questions:
            print(f"sub-question [{sub_question.target_sub_corpus}] {sub_question.text}")
    accepted = [e for e in sink.of("verdict") if e.verdict == "accept"]
    print(f"{len(result.ranked_document_keys)} sources accepted")
    for verdict in accepted:
        evidence = verdict.evidence.text if verdict.evidence else ""
        print(f"- {verdict.document_key}: {verdict.rationale}\n    « {evidence[:300]} »")


if __name__ == "__main__":
    main()
