"""The retrieval tests' archive builder serves the evaluation tests too."""

from tests.retrieval.conftest import archive, day  # noqa: F401
