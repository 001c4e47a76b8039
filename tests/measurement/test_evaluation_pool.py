"""`evaluate --pool` bounds every registered system, the agent's own included."""

from __future__ import annotations

import json

import pytest

from archive.models import Document
from archive.outbox import apply_pending
from archive.services import ingest_file
from measurement.evaluation.records import EvalQuestion
from measurement.evaluation.systems import EvalConfig, build_system, system_names
from retrieval.channels import bm25, dense

pytestmark = pytest.mark.django_db

TOPIC = ("M. Lejeune défend à la Chambre le droit de douane sur les céréales ; la presse "
         "discute le prix du pain et la protection de l'agriculture.")
COLLECTIONS = [
    ("legaulois_1887_v1", "Le Gaulois", "1887-02-2"),
    ("lintransigeant_1887_v1", "L'Intransigeant", "1887-02-1"),
    ("debats_1887", "Chambre des députés, débats parlementaires (Journal officiel)",
     "1887-02-0"),
]
# Gold ids (two documents of the pool) drive the oracle systems; the others ignore them.
GOLD = ("legaulois_1887_v1:1887-02-21", "debats_1887:1887-02-01")
QUESTIONS = [
    EvalQuestion(qid="q1", question_type="", gold_keys=GOLD, question=(
        "Comment M. Lejeune défend-il le droit sur les céréales le 26 février 1887 ?")),
    EvalQuestion(qid="q2", question_type="", gold_keys=GOLD, question=(
        "Que dit la presse du prix du pain et de la protection de l'agriculture ?")),
]


def _line(collection: str, source: str, day: str, number: int) -> str:
    raw_id = f"{day}{number}"
    text = f"{TOPIC} Article {number} de {source}, numéro {raw_id}. " * 3
    return json.dumps({"doc_id": f"{collection}:{raw_id}", "collection": collection,
                       "source": source, "raw_id": raw_id, "date": f"{day}{number}",
                       "text": text}, ensure_ascii=False)


@pytest.fixture
def archive(settings, tmp_path):
    """Nine documents on one topic in three sub-corpora, so every search finds all of them."""
    settings.TRACE_EMBEDDING_PROVIDER = "hash"
    settings.TRACE_BM25_DIR = tmp_path / "bm25"
    bm25.clear_cache()
    dense.set_embedder(None)
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(_line(c, s, d, n) for c, s, d in COLLECTIONS for n in (1, 2, 3))
                    + "\n", encoding="utf-8")
    ingest_file(path=path)
    apply_pending()  # the test's transaction never commits, so the ingest's own call never runs
    yield
    bm25.clear_cache()
    dense.set_embedder(None)


@pytest.fixture
def llm_endpoint(settings, stub_llm):
    """The `trace` system runs against the local stub endpoint."""
    settings.TRACE_LLM_BASE_URL = stub_llm.url
    for role in ("PLANNER", "AGENT", "RERANKER"):
        setattr(settings, f"TRACE_LLM_{role}_MODEL", "stub-model")


def _pool() -> tuple[tuple[int, ...], set[str]]:
    """A pool of one paper and one day of debates: four of the nine documents."""
    documents = Document.objects.select_related("sub_corpus").filter(
        sub_corpus__slug__in=["legaulois_1887_v1", "debats_1887"]).order_by("external_id")
    chosen = [d for d in documents if d.sub_corpus.slug == "legaulois_1887_v1"][:3]
    chosen += [d for d in documents if d.sub_corpus.slug == "debats_1887"][:1]
    return tuple(d.pk for d in chosen), {d.key for d in chosen}


def _returned(run) -> set[str]:
    """Every document a system put forward: its ranking and, for the agent, what it saw."""
    found = set(run.ranked_keys)
    for field in ("accepted_keys", "held_keys", "rejected_keys", "surfaced_keys"):
        found |= set(getattr(run.agent, field, ()))
    return found


def test_agent_systems_are_registered():
    assert {"offline", "trace"} <= set(system_names())


def test_every_registered_system_stays_inside_the_pool(archive, llm_endpoint):
    document_ids, pool_keys = _pool()
    config = EvalConfig(document_ids=document_ids, depth=20)
    outside: dict[str, set[str]] = {}
    empty = []
    for name in system_names():
        system = build_system(name, config)
        runs = [system(question) for question in QUESTIONS]
        returned = set().union(*(_returned(run) for run in runs))
        if returned - pool_keys:
            outside[name] = returned - pool_keys
        if not any(run.ranked_keys for run in runs):
            empty.append(name)
    assert not outside, f"documents outside the pool: {outside}"
    assert not empty, f"systems that found nothing, so the check proves nothing: {empty}"


@pytest.mark.parametrize("name", ["offline", "bm25"])
def test_without_a_pool_the_same_systems_reach_the_other_documents(archive, name):
    _, pool_keys = _pool()
    system = build_system(name, EvalConfig(depth=20))
    returned = set().union(*(_returned(system(question)) for question in QUESTIONS))
    assert returned - pool_keys, "the test archive must tempt every system out of the pool"


def test_the_agent_plans_only_over_the_pool_sub_corpora(archive):
    from agent.investigations.retriever import ArchiveRetriever

    document_ids, _ = _pool()
    slugs = [info.slug for info in ArchiveRetriever(document_ids=document_ids).sub_corpora()]
    assert slugs == ["debats_1887", "legaulois_1887_v1"]
    assert [info.slug for info in ArchiveRetriever(sub_corpora=("debats_1887",)).sub_corpora()] \
        == ["debats_1887"]
