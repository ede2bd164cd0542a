from django.urls import path

from studies.library import views

app_name = "library"
urlpatterns = [
    path("", views.collection_list, name="collection_list"),
    path("upload/", views.collection_upload, name="collection_upload"),
    path("uploads/<int:pk>/", views.upload_detail, name="upload_detail"),
    path("uploads/<int:pk>/status.json", views.upload_status, name="upload_status"),
    path("<int:pk>/", views.collection_detail, name="collection_detail"),
    path("<int:pk>/share/", views.collection_share_page, name="collection_share"),
    path("<int:pk>/unshare/", views.collection_unshare_page, name="collection_unshare"),
    path("<int:pk>/delete/", views.collection_delete_page, name="collection_delete"),
    path("for-study/<slug:slug>/", views.study_collection, name="study_collection"),
    # A study made without its collection's judgments gets them (manage.py repair_reference too).
    path(
        "for-study/<slug:slug>/reference/",
        views.study_collection_reference,
        name="study_collection_reference",
    ),
]
