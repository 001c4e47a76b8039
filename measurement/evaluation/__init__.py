"""Retrieval-first evaluation: systems, metrics, reports."""
