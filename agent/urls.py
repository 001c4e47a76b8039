"""Investigation URLs."""

from django.urls import path

from agent import views

urlpatterns = [
    path("", views.investigation_list, name="investigation_list"),
    path("new/", views.investigation_new, name="investigation_new"),
    path("<int:pk>/", views.investigation_detail, name="investigation_detail"),
    path("<int:pk>/steps/", views.investigation_steps, name="investigation_steps"),
    path("<int:pk>/log/", views.investigation_log, name="investigation_log"),
    path("<int:pk>/cancel/", views.investigation_cancel, name="investigation_cancel"),
    path("<int:pk>/resume/", views.investigation_resume, name="investigation_resume"),
    path("<int:pk>/review/", views.investigation_review, name="investigation_review"),
    path("<int:pk>/override/", views.source_override, name="source_override"),
    path("<int:pk>/note/", views.source_note, name="source_note"),
    path("<int:pk>/judge-learning/", views.judge_learning, name="judge_learning"),
    path("<int:pk>/quote/", views.source_quote, name="source_quote"),
    path("<int:pk>/order/", views.source_reorder, name="source_reorder"),
    path("<int:pk>/answer/", views.answer_draft, name="answer_draft"),
    path("<int:pk>/evidence/", views.evidence, name="evidence"),
    path("<int:pk>/source/", views.open_source, name="open_source"),
    path("<int:pk>/export/<str:fmt>/", views.export, name="export"),
    path("<int:pk>/file/", views.investigation_download, name="investigation_download"),
    path("import/", views.investigation_import, name="investigation_import"),
    path("<int:pk>/share/", views.investigation_share, name="investigation_share"),
    path("<int:pk>/again/", views.investigation_again, name="investigation_again"),
    path("compare/", views.investigation_compare, name="investigation_compare"),
    path("compare/csv/", views.investigation_compare_csv, name="investigation_compare_csv"),
    path("batches/", views.batch_list, name="batch_list"),
    path("batches/new/", views.batch_new, name="batch_new"),
    path("batches/<int:pk>/", views.batch_detail, name="batch_detail"),
    path("batches/<int:pk>/again/", views.batch_again, name="batch_again"),
    path("batches/compare/", views.batch_compare, name="batch_compare"),
    path("batches/compare/csv/", views.batch_compare_csv, name="batch_compare_csv"),
]
