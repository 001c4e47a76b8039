"""Django-free building blocks shared by the engine, the archive and retrieval."""
