"""Search URLs."""

from django.urls import path

from retrieval import views

urlpatterns = [
    path("", views.search_page, name="search"),
]
