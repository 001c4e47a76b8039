"""Investigation URLs: the pages of a run (investigations) and of its review."""

from django.urls import path

from agent.investigations import views as investigation_views
from agent.review import views as review_views

urlpatterns = [
    path("", investigation_views.investigation_list, name="investigation_list"),
    path("new/", investigation_views.investigation_new, name="investigation_new"),
    path("<int:pk>/", investigation_views.investigation_detail, name="investigation_detail"),
    path("<int:pk>/steps/", investigation_views.investigation_steps, name="investigation_steps"),
    path("<int:pk>/log/", investigation_views.investigation_log, name="investigation_log"),
    path("<int:pk>/cancel/", investigation_views.investigation_cancel, name="investigation_cancel"),
    path("<int:pk>/resume/", investigation_views.investigation_resume, name="investigation_resume"),
    path("<int:pk>/review/", review_views.investigation_review, name="investigation_review"),
    path("<int:pk>/override/", review_views.source_override, name="source_override"),
    path("<int:pk>/note/", review_views.source_note, name="source_note"),
    path("<int:pk>/judge-learning/", review_views.judge_learning, name="judge_learning"),
    path("<int:pk>/quote/", review_views.source_quote, name="source_quote"),
    path("<int:pk>/order/", review_views.source_reorder, name="source_reorder"),
    path("<int:pk>/answer/", review_views.answer_draft, name="answer_draft"),
    path("<int:pk>/evidence/", review_views.evidence, name="evidence"),
    path("<int:pk>/source/", review_views.open_source, name="open_source"),
    path("<int:pk>/export/<str:fmt>/", review_views.export, name="export"),
    path("<int:pk>/file/", investigation_views.investigation_download,
         name="investigation_download"),
    path("import/", investigation_views.investigation_import, name="investigation_import"),
    path("<int:pk>/share/", investigation_views.investigation_share, name="investigation_share"),
    path("<int:pk>/again/", investigation_views.investigation_again, name="investigation_again"),
    path("compare/", review_views.investigation_compare, name="investigation_compare"),
    path("compare/csv/", review_views.investigation_compare_csv, name="investigation_compare_csv"),
    path("batches/", investigation_views.batch_list, name="batch_list"),
    path("batches/new/", investigation_views.batch_new, name="batch_new"),
    path("batches/<int:pk>/", investigation_views.batch_detail, name="batch_detail"),
    path("batches/<int:pk>/again/", investigation_views.batch_again, name="batch_again"),
    path("batches/compare/", review_views.batch_compare, name="batch_compare"),
    path("batches/compare/csv/", review_views.batch_compare_csv, name="batch_compare_csv"),
]
