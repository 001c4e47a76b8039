"""Django database backend that starts the embedded PostgreSQL on first connection."""
