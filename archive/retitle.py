"""Give stored debate sections the readable titles a fresh import would give them."""

from __future__ import annotations

from typing import Any

from archive.importers.records import DocumentRecord
from archive.models import Document
from archive.titles import debate_title, item_headings, raw_title, section_parts
from common.french_dates import format_french_date
from common.search import SubCorpusInfo

# Metadata the shared-layout importer writes for a debate section (other layouts keep theirs).
_SECTION_METADATA = {"sitting", "section", "raw_title"}


def debate_sections_retitle(*, document_model: Any = None) -> int:
    """Recompute title, page, metadata and content hash of debate sections; return how many changed.

    ``document_model`` defaults to the live model.
    """
    document_model = document_model or Document
    documents = [
        d for d in document_model.objects.filter(sub_corpus__genre="debates")
        .select_related("sub_corpus").order_by("pk")
        if section_parts(d.external_id) and set(d.metadata or {}) <= _SECTION_METADATA
    ]
    changed = []
    for slug in {d.sub_corpus.slug for d in documents}:
        sections = [d for d in documents if d.sub_corpus.slug == slug]
        headings = item_headings((d.external_id, d.text) for d in sections)
        for document in sections:
            if _retitle(document, headings):
                changed.append(document)
    document_model.objects.bulk_update(
        changed, ["title", "page", "metadata", "content_hash"], batch_size=200
    )
    return len(changed)


def _retitle(document: Any, headings: dict[str, str]) -> bool:
    parts = section_parts(document.external_id)
    assert parts is not None
    item_key, sitting, section = parts
    title = debate_title(
        when=format_french_date(document.date, document.date_precision), text=document.text,
        section=section, item_heading=headings.get(item_key, "") if section else "",
    )
    metadata = {"sitting": sitting, "section": section, "raw_title": raw_title(document.text)}
    page = f"séance {sitting}, section {section}"
    record = DocumentRecord(
        line=0, sub_corpus=SubCorpusInfo(document.sub_corpus.slug, ""), external_id="",
        text=document.text, title=title, publication=document.publication, date=document.date,
        date_precision=document.date_precision, page=page, url=document.url, metadata=metadata,
    )
    content_hash = record.content_hash()
    if content_hash == document.content_hash:
        return False
    document.title, document.page, document.metadata = title, page, metadata
    document.content_hash = content_hash
    return True
