from django.apps import AppConfig

from archive.outbox import register_consumer
from retrieval import vocabulary
from retrieval.bm25 import indexer


class RetrievalConfig(AppConfig):
    name = "retrieval"
    verbose_name = "Retrieval"

    def ready(self):
        # Registering opens nothing: the indexes are touched when the outbox is applied.
        register_consumer(indexer.CONSUMER, indexer.drain)
        register_consumer(vocabulary.CONSUMER, vocabulary.drain)
