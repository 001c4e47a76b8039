"""A tiny archive in Postgres and an in-memory retriever over the same chunks."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from django.contrib.auth import get_user_model

from agent.engine.testing import InMemoryRetriever
from agent.engine.types import Candidate, SubCorpusInfo

TEXTS = [
    ("legaulois_1887_v1", "Le Gaulois", "press", "18870226", "1887-02-26",
     "M. Lejeune défend la protection de l'agriculture et le droit sur les céréales."),
    ("lintransigeant_1887_v1", "L'Intransigeant", "press", "18870227", "1887-02-27",
     "L'Intransigeant raille le discours de M. Lejeune sur les céréales, un bloc enfariné."),
    ("lintransigeant_1887_v1", "L'Intransigeant", "press", "18870301", "1887-03-01",
     "Courses de chevaux à Longchamp, le temps est beau. <script>alert(1)</script>"),
    ("debats_1887", "Chambre des députés", "debates", "1887-02-25_100_000", "1887-02-25",
     "M. le président. La parole est à M. Lejeune sur le droit de douane des céréales."),
]


@pytest.fixture
def users(db):
    model = get_user_model()
    return {name: model.objects.create_user(username=name, password="pw-" + name * 3)
            for name in ("alice", "bob", "eve")}


@pytest.fixture
def tiny_archive(db):
    """Create documents and chunks; return an InMemoryRetriever over the same chunk ids."""
    from archive.models import Chunk, Document, SubCorpus

    candidates = []
    infos: dict[str, SubCorpusInfo] = {}
    for slug, name, genre, external_id, day, text in TEXTS:
        sub_corpus, _ = SubCorpus.objects.get_or_create(
            slug=slug, defaults={"name": name, "genre": genre})
        infos[slug] = SubCorpusInfo(slug=slug, name=name, genre=genre)
        document = Document.objects.create(
            sub_corpus=sub_corpus, external_id=external_id, title=f"{name}, {day}",
            publication=name, date=dt.date.fromisoformat(day), date_precision="day", text=text,
            content_hash=hashlib.sha256(text.encode()).hexdigest(),
        )
        chunk = Chunk.objects.create(document=document, ordinal=0, text=text, char_start=0,
                                     char_end=len(text), token_count=len(text.split()))
        candidates.append(Candidate(
            chunk_id=chunk.pk, document_id=document.key, sub_corpus=slug, title=document.title,
            date=day, text=text, score=0.0))
    return InMemoryRetriever(candidates, list(infos.values()))
