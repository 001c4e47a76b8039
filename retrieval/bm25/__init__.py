"""BM25 over chunks, behind one interface (`base.TextIndex`), kept current from the index outbox.

`store` says where the index lives and which engine carries it (whoosh or Tantivy), `indexer`
is its one writer, the channel (`retrieval/channels/bm25.py`) only reads it.
"""
