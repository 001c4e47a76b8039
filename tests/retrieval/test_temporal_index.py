"""The temporal channel walks the date index from the window outwards, never the whole archive."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from archive.models import Document
from common.search import DateWindow, SearchRequest
from retrieval.channels.temporal import TemporalChannel

pytestmark = pytest.mark.django_db


def test_nearest_documents_come_from_both_sides_of_the_window_in_distance_order(archive):
    days = [dt.date(1887, 1, 1) + dt.timedelta(days=7 * i) for i in range(30)]
    docs = [archive.document("p", [f"Article {i}."], date=day) for i, day in enumerate(days)]
    window = DateWindow(dt.date(1887, 3, 1), dt.date(1887, 3, 10))
    hits = TemporalChannel().search(SearchRequest("temporal", window=window, limit=6))
    distance = {doc.pk: max((window.start - doc.date).days, (doc.date - window.end).days, 0)
                for doc in docs}
    expected = sorted(docs, key=lambda d: (distance[d.pk], d.date, d.pk))[:6]
    assert [h.document_id for h in hits] == [d.pk for d in expected]


def test_the_query_plan_uses_the_date_index(archive):
    # An archive's shape: thousands of dated documents in a sub-corpus, statistics gathered.
    # On a handful of rows the planner may as well walk the sub-corpus index, or scan.
    sub_corpus = archive.sub_corpus("p")
    Document.objects.bulk_create(
        Document(sub_corpus=sub_corpus, external_id=f"bulk{i}", title="", text="",
                 content_hash="x", date=dt.date(1880, 1, 1) + dt.timedelta(days=i))
        for i in range(3000))
    for i in range(5):
        archive.document("p", [f"Article {i}."], date=dt.date(1887, 1, 1 + i))
    window = DateWindow.around(dt.date(1887, 1, 3))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE archive_document")
        cursor.execute("ANALYZE archive_subcorpus")
    with CaptureQueriesContext(connection) as captured:
        TemporalChannel().search(SearchRequest("temporal", window=window, limit=3))
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + captured.captured_queries[-1]["sql"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "archive_doc_date_723d24_idx" in plan or "archive_doc_sub_cor_6e2e92_idx" in plan, plan
    assert "Seq Scan on archive_document" not in plan, plan
