"""TRACE site package: settings, URLs, Celery app and the embedded-services launcher."""

from .celery import app as celery_app

__all__ = ["celery_app"]
