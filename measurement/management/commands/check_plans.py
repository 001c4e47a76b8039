"""Plan every question of a file with the offline planner, check each plan, write the figures.

    manage.py check_plans --questions demo/historiqa/questions_dev.jsonl --write-doc docs/planner.md

The archive's own sub-corpora (names and aliases) are those the planner maps questions to.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agent.engine.french_rewrite import aliases_pattern
from agent.engine.offline_plan import offline_plan
from agent.engine.plan_check import check_plan, kept_share
from agent.engine.question_parse import french_pipeline
from agent.engine.sources import is_press
from agent.investigations.retriever import ArchiveRetriever
from common.generated_docs import shown_path, write_generated_block
from common.jsonl import json_file_objects
from measurement.evaluation.metrics import median, percentile

EXAMPLES = 6


class Command(BaseCommand):
    help = "Check the offline planner's sub-questions on a questions file and write the figures."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--questions", required=True)
        parser.add_argument("--write-doc", default=None)
        parser.add_argument("--doc-block", default="planner-check")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["questions"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        questions = []
        for number, row, problem in json_file_objects(path):
            if row is None or not isinstance(row.get("question"), str):
                raise CommandError(f"{path}:{number}: {problem or 'no question field'}")
            questions.append(row["question"])
        infos = ArchiveRetriever().sub_corpora()
        if not infos:
            raise CommandError("the archive holds no sub-corpus: ingest a corpus first")
        started = time.perf_counter()
        french_pipeline()
        load_seconds = time.perf_counter() - started
        papers = [(info, aliases_pattern(info)) for info in infos if is_press(info)]
        failing, short, named, named_ok, seconds, shares = 0, 0, 0, 0, [], []
        problems: dict[str, int] = {}
        examples: list[tuple[str, list[str]]] = []
        for index, question in enumerate(questions, start=1):
            started = time.perf_counter()
            plan = offline_plan(question, infos, 5, None)
            seconds.append(time.perf_counter() - started)
            texts = [sq.text for sq in plan]
            findings = check_plan(question, texts)
            for finding in findings:
                problems[finding.problem] = problems.get(finding.problem, 0) + 1
            failing += len({f.index for f in findings if f.index is not None})
            share = kept_share(question, texts)
            shares.append(share)
            short += share < 0.9
            for info, pattern in papers:
                if pattern.search(question):
                    named += 1
                    own = [sq.text for sq in plan if sq.target_sub_corpus == info.slug]
                    named_ok += bool(own) and all(pattern.search(text) for text in own)
            if len(texts) > 1 and len(examples) < EXAMPLES and index % 37 == 1:
                examples.append((question, texts))
            if index % 50 == 0:
                self.stdout.write(f"planned {index}/{len(questions)}")
        ms = sorted(1000 * s for s in seconds)
        lines = [
            f"Questions: {len(questions)} (`{shown_path(path, settings.BASE_DIR)}`); "
            f"sub-corpora: {', '.join(info.name for info in infos)}.",
            "",
            "| figure | measured | target |",
            "|---|---|---|",
            f"| sub-questions failing the check | {failing} | 0 |",
            f"| questions keeping < 90 % of their content words | {short} | 0 |",
            f"| content words kept, lowest / median share | {min(shares):.2f} / "
            f"{median(shares):.2f} | ≥ 0.90 |",
            f"| named newspapers named in their press sub-question | {named_ok} / {named} | all |",
            f"| planning time per question, median / p95 / max | {median(ms):.1f} / "
            f"{percentile(ms, 95):.1f} / {ms[-1]:.1f} ms | median ≤ 50 ms |",
            f"| parser load, once per process | {load_seconds:.1f} s | |",
            "",
            "Findings by kind: " + (", ".join(f"{k}: {v}" for k, v in sorted(problems.items()))
                                     or "none") + ".",
            "",
            "Examples (every 37th question with more than one sub-question):",
            "",
        ]
        for question, texts in examples:
            lines.append(f"- « {question} »")
            lines += [f"  - « {text} »" for text in texts]
        body = "\n".join(lines)
        self.stdout.write(body)
        if options["write_doc"]:
            command = (f"manage.py check_plans --questions {shown_path(path, settings.BASE_DIR)}"
                       f" --write-doc {options['write_doc']}")
            write_generated_block(Path(options["write_doc"]), options["doc_block"], body,
                                  command=command)
