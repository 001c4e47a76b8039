from django.apps import AppConfig
from django.db.models.signals import post_delete

from archive import field_limits
from archive.lookups import ILike
from archive.outbox import record_changes


class ArchiveConfig(AppConfig):
    name = "archive"
    verbose_name = "Archive"

    def ready(self):
        # deferred: Django imports apps.py before the app registry is ready, and a models module
        # may be imported only once it is (Django's rule for AppConfig, not a cost)
        from archive.models import Chunk, Document

        Chunk._meta.get_field("text").register_lookup(ILike)
        field_limits.register()

        def mark_deleted(sender, instance, **kwargs) -> None:
            # Runs inside the delete's transaction, whoever deletes (admin, cascade, scripts).
            record_changes([instance.pk])

        post_delete.connect(mark_deleted, sender=Document, weak=False,
                            dispatch_uid="archive.outbox.document_deleted")
