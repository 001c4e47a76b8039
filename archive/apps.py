from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    name = "archive"
    verbose_name = "Archive"

    def ready(self):
        from archive.lookups import ILike
        from archive.models import Chunk

        Chunk._meta.get_field("text").register_lookup(ILike)
