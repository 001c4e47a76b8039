"""The in-memory retriever the tests search (it lives with the engine: benchmarks use it too)."""

from agent.engine.memory_retriever import InMemoryRetriever, chunk

__all__ = ["InMemoryRetriever", "chunk"]
