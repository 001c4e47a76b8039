"""Archive browsing URLs."""

from django.urls import path

from archive import views

urlpatterns = [
    path("", views.archive_home, name="archive_home"),
]
