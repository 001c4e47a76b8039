"""The engine's Retriever port over the archive in Postgres and the retrieval channels."""

from __future__ import annotations

from archive.models import Document, SubCorpus
from common.search import Hit, SearchRequest, SubCorpusInfo
from retrieval.search import search
from retrieval.selectors import with_passages
from retrieval.warm_start import warm_start


class ArchiveRetriever:
    """Answer the engine's warm starts and searches with the real channels.

    `sub_corpora` and `document_ids` restrict every search to a pool (an evaluation on a slice
    of the archive): the restriction is applied inside each channel's query, a request for a
    sub-corpus outside the pool finds nothing, and only the pool's sub-corpora are offered.
    """

    def __init__(self, *, sub_corpora: tuple[str, ...] | None = None,
                 document_ids: tuple[int, ...] | None = None) -> None:
        self.allowed_sub_corpora = None if sub_corpora is None else tuple(sub_corpora)
        self.allowed_documents = None if document_ids is None else tuple(document_ids)

    def sub_corpora(self) -> list[SubCorpusInfo]:
        """List the sub-corpora the engine may plan over (those of the pool, if any)."""
        rows = SubCorpus.objects.order_by("slug")
        if self.allowed_sub_corpora is not None:
            rows = rows.filter(slug__in=self.allowed_sub_corpora)
        if self.allowed_documents is not None:
            holding = Document.objects.filter(pk__in=self.allowed_documents)
            rows = rows.filter(pk__in=holding.values("sub_corpus_id"))
        return [
            SubCorpusInfo(slug=sc.slug, name=sc.name, genre=sc.genre, description=sc.description,
                          language=sc.language)
            for sc in rows
        ]

    def warm_start(self, request: SearchRequest) -> list[Hit]:
        """Fuse the channels inside the pool; hits come with their passages."""
        inside = self.within_pool(request)
        return with_passages(warm_start(inside)) if inside is not None else []

    def search(self, request: SearchRequest) -> list[Hit]:
        """Run one channel inside the pool; hits come with their passages."""
        inside = self.within_pool(request)
        if inside is None or (inside.channel == "temporal" and inside.window is None):
            return []
        return with_passages(search(inside))

    def within_pool(self, request: SearchRequest) -> SearchRequest | None:
        """Narrow a request to the pool; None when nothing of the pool can match it."""
        sub_corpora = _narrow(request.sub_corpora, self.allowed_sub_corpora)
        document_ids = _narrow(request.document_ids, self.allowed_documents)
        if sub_corpora == () or document_ids == ():
            return None
        return request.with_(sub_corpora=sub_corpora, document_ids=document_ids)


def _narrow[T](asked: tuple[T, ...] | None, allowed: tuple[T, ...] | None) -> tuple[T, ...] | None:
    """Intersect a restriction with the pool's, keeping the asked order (None = unrestricted)."""
    if allowed is None:
        return asked
    if asked is None:
        return allowed
    pool = set(allowed)
    return tuple(value for value in asked if value in pool)
