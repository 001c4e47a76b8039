"""The index outbox: marks written with their rows, applied once, replayed after a failure."""

from __future__ import annotations

import pytest
from django.db import transaction

from archive import outbox
from archive.models import Document, IndexOutbox
from archive.services import ingest_file
from tests.archive.conftest import shared_line

pytestmark = pytest.mark.django_db(transaction=True)


class Recorder:
    """A consumer that remembers which documents it applied, and can be told to fail once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.applied: list[list[int]] = []
        self.fail_next = False

    def apply(self) -> int:
        return outbox.drain(self.name, self._apply_documents)

    def _apply_documents(self, document_ids: list[int]) -> None:
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        self.applied.append(sorted(document_ids))


@pytest.fixture
def recorder():
    consumer = Recorder("test-recorder")
    saved = dict(outbox._consumers)
    outbox._consumers.clear()  # this test's consumer alone
    outbox.register_consumer(consumer.name, consumer.apply)
    yield consumer
    outbox._consumers.clear()
    outbox._consumers.update(saved)


def marked(consumer: str) -> set[int]:
    return set(IndexOutbox.objects.filter(consumer=consumer).values_list("document_id", flat=True))


def test_a_committed_ingest_is_applied_and_its_marks_cleared(recorder, write_jsonl):
    report = ingest_file(path=write_jsonl([shared_line("1", "Un texte."),
                                           shared_line("2", "Un autre texte.")]), embed=False)
    ids = sorted(Document.objects.values_list("pk", flat=True))
    assert recorder.applied == [ids]
    assert report.indexed[recorder.name] == 2
    assert marked(recorder.name) == set()


def test_a_rolled_back_write_leaves_no_mark(recorder):
    with pytest.raises(RuntimeError), transaction.atomic():
        outbox.record_changes([101, 102])
        raise RuntimeError("abort")
    assert marked(recorder.name) == set()
    assert outbox.apply_pending()[recorder.name] == 0


def test_a_failed_apply_keeps_the_marks_and_a_replay_applies_them(recorder):
    outbox.record_changes([7, 8, 8])
    recorder.fail_next = True
    with pytest.raises(outbox.ApplyFailed, match="disk full"):
        outbox.apply_pending()
    assert marked(recorder.name) == {7, 8}
    assert outbox.backlog()[recorder.name] == 2
    assert outbox.apply_pending() == {recorder.name: 2}
    assert recorder.applied == [[7, 8]] and marked(recorder.name) == set()


def test_deleting_a_document_marks_it(recorder, write_jsonl):
    ingest_file(path=write_jsonl([shared_line("1", "Un texte.")]), embed=False)
    document = Document.objects.get()
    pk = document.pk
    document.sub_corpus.delete()  # the document goes by cascade
    assert marked(recorder.name) == {pk}


def test_a_mark_added_while_applying_survives_for_the_next_run(recorder):
    outbox.record_changes([1])

    def apply_and_write(document_ids: list[int]) -> None:
        if not recorder.applied:
            outbox.record_changes([1])  # the same document changes again meanwhile
        recorder.applied.append(document_ids)

    assert outbox.drain(recorder.name, apply_and_write, batch=10) >= 1
    assert marked(recorder.name) == set()  # the drain loops until none is left
    assert recorder.applied == [[1], [1]]


def test_a_whole_build_drops_the_marks_it_covers_and_keeps_those_made_during_it(recorder):
    outbox.record_changes([1, 2, 2])

    def build() -> None:
        outbox.record_changes([3])  # another ingest commits while the build reads the rows

    assert outbox.rebuild_covering(recorder.name, build) == 2  # one mark per document
    assert marked(recorder.name) == {3}
