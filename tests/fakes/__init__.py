"""Fakes for tests and benchmarks: a scripted chat model, an in-memory retriever, an interrupting
sink and an OpenAI-compatible stub endpoint (``python -m tests.fakes.stub_server --port N``)."""
