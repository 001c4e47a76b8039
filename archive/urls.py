"""Archive browsing URLs."""

from django.urls import path

from archive import views

urlpatterns = [
    path("", views.archive_home, name="archive_home"),
    path("documents/<int:pk>/", views.document_detail, name="document_detail"),
    path("chunks/<int:pk>/correct/", views.chunk_correct, name="chunk_correct"),
    # Any stored name, not only a slug: sub-corpora stored before slugs were enforced stay
    # reachable.
    path("<str:slug>/", views.sub_corpus_detail, name="sub_corpus_detail"),
]
