"""Evidence spans reach the database: chunk offsets from the archive, spans on verdict rows."""

from __future__ import annotations

import hashlib

from agent.engine.offline import OfflinePolicy
from agent.investigations import execution, services
from agent.models import Verdict
from archive.models import Chunk, Document, SubCorpus
from common.search import Hit
from retrieval.selectors import with_passages

QUESTION = "Comment M. Lejeune défend-il le droit sur les céréales ?"


def test_hits_carry_their_chunk_offset_in_the_document(db):
    text = "Première partie sans rapport. " * 5 + "M. Lejeune défend le droit sur les céréales."
    sub_corpus = SubCorpus.objects.create(slug="debats_1887", name="Débats", genre="debates")
    document = Document.objects.create(
        sub_corpus=sub_corpus, external_id="1887-02-25", title="Séance", text=text,
        content_hash=hashlib.sha256(text.encode()).hexdigest())
    split = text.index("M. Lejeune")
    Chunk.objects.create(document=document, ordinal=0, text=text[:split], char_start=0,
                         char_end=split, token_count=1)
    second = Chunk.objects.create(document=document, ordinal=1, text=text[split:],
                                  char_start=split, char_end=len(text), token_count=1)
    [hit] = with_passages([Hit(chunk_id=second.pk, document_id=document.pk,
                               document_key=document.key, sub_corpus="debats_1887", score=1.0,
                               rank=1, channel="bm25")])
    assert hit.chunk_start == split > 0
    assert text[hit.chunk_start:hit.chunk_start + len(hit.text)] == hit.text


def test_every_agent_verdict_row_stores_its_evidence_as_document_offsets(users, tiny_archive):
    investigation = services.investigation_create(owner=users["alice"], question=QUESTION,
                                                  enqueue=False)
    execution.investigation_execute(investigation_id=investigation.pk, retriever=tiny_archive,
                                   policy=OfflinePolicy())
    rows = list(Verdict.objects.filter(investigation=investigation))
    assert rows
    keys = {doc.key: doc.text for doc in Document.objects.all()}
    for row in rows:
        assert row.evidence_text, row.rationale
        assert keys[row.document_key][row.evidence_start:row.evidence_end] == row.evidence_text
        assert len(row.rationale) <= 120 and not any(ch.isdigit() for ch in row.rationale)
