"""Collection pages: upload (imported and indexed by a Celery task, its progress polled from the database),
list, share, delete, and attach one to a study. Thin: an access-checked fetch, a form, a service, a
redirect."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from sessionlab.queueing import delay_on_commit
from studies.accounts.access import researcher_required, studies_visible_to
from studies.assessment.collection_reference import reference_version_from_collection
from studies.design import services as design_services
from studies.design.forms import StudyForm
from studies.design.selectors import collections_visible_to
from studies.errors import StudiesError
from studies.library import services
from studies.library.forms import AttachForm, ShareForm, UploadForm
from studies.library.sweep import uploads_stale_fail
from studies.library.tasks import collection_upload_process_task
from studies.models import CollectionUpload
from studies.search.systems import collection_index_states


def _upload_for(request, pk) -> CollectionUpload:
    # Only the researcher who uploaded (or a superuser) follows an upload; 404 for everyone else.
    uploads = CollectionUpload.objects.all()
    if not request.user.is_superuser:
        uploads = uploads.filter(owner=request.user)
    upload = get_object_or_404(uploads, pk=pk)
    # Its worker may have stopped: the page says so without the beat's sweep (none runs on one machine).
    if not upload.finished and uploads_stale_fail(upload_id=upload.pk):
        upload.refresh_from_db()
    return upload


def _collection_for(request, pk):
    return get_object_or_404(collections_visible_to(request.user), pk=pk)


@researcher_required
def collection_list(request):
    collections = (
        collections_visible_to(request.user)
        .select_related("owner")
        .annotate(document_count=Count("documents", distinct=True))
        .order_by("name")
    )
    uploads = CollectionUpload.objects.filter(owner=request.user).exclude(
        status=CollectionUpload.Status.DONE
    )[:10]
    return render(
        request,
        "library/collection_list.html",
        {
            "collections": collections,
            "uploads": uploads,
            "form": UploadForm(),
            "limit_mb": services.MAX_UPLOAD_BYTES // services.MiB,
        },
    )


@researcher_required
@require_POST
def collection_upload(request):
    form = UploadForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            upload = services.upload_create(
                owner=request.user,
                name=data["name"],
                description=data["description"],
                format=data["format"],
                files={role: data.get(role) for role in services.FILE_ROLES},
            )
        except StudiesError as exc:
            form.add_error(_field_of(str(exc), data), str(exc))
        else:
            # A broker outage must not fail the request: the upload then ends as failed, saying so.
            delay_on_commit(
                collection_upload_process_task,
                upload.pk,
                on_failure=lambda exc, pk=upload.pk: services.upload_not_queued(upload_id=pk),
            )
            return redirect("library:upload_detail", pk=upload.pk)
    collections = (
        collections_visible_to(request.user).annotate(document_count=Count("documents")).order_by("name")
    )
    return render(
        request,
        "library/collection_list.html",
        {
            "collections": collections,
            "uploads": [],
            "form": form,
            "limit_mb": services.MAX_UPLOAD_BYTES // services.MiB,
        },
        status=400,
    )


def _field_of(message: str, data: dict) -> str | None:
    """The form field a refusal is about (shown next to it): the file it names, or the name."""
    for role in services.FILE_ROLES:
        if data.get(role) is not None and message.startswith(f"{data[role].name}:"):
            return role
    if "collection named" in message or "needs a name" in message:
        return "name"
    if "documents file" in message:
        return "documents"
    return None


def _status(upload: CollectionUpload) -> dict:
    return {
        "status": upload.status,
        "label": upload.get_status_display(),
        "progress": upload.progress,
        "stage": upload.stage,
        "error": upload.error,
        "finished": upload.finished,
        "collection_url": (
            reverse("library:collection_detail", args=[upload.collection_id])
            if upload.collection_id and upload.status == CollectionUpload.Status.DONE
            else None
        ),
    }


@researcher_required
def upload_detail(request, pk):
    upload = _upload_for(request, pk)
    return render(request, "library/upload_detail.html", {"upload": upload, "state": _status(upload)})


@researcher_required
def upload_status(request, pk):
    return JsonResponse(_status(_upload_for(request, pk)), headers={"Cache-Control": "no-store"})


@researcher_required
def collection_detail(request, pk):
    collection = _collection_for(request, pk)
    may_share = design_services.collection_may_share(request.user, collection)
    return render(
        request,
        "library/collection_detail.html",
        {
            "collection": collection,
            "documents": collection.documents.count(),
            "topics": collection.topics.all()[:500],
            "topic_count": collection.topics.count(),
            "judgments": collection.judgments.count(),
            "indexes": collection_index_states(collection=collection),
            "studies": studies_visible_to(request.user).filter(collection=collection).order_by("name"),
            "shared_with": collection.shared_with.order_by("username") if may_share else [],
            "may_share": may_share,
            "share_form": ShareForm(),
        },
    )


@researcher_required
@require_POST
def collection_share_page(request, pk):
    collection = _collection_for(request, pk)
    form = ShareForm(request.POST)
    if form.is_valid():
        username = form.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        try:
            if user is None:
                raise StudiesError(f"no researcher named {username!r}")
            shared = design_services.collection_share(collection=collection, user=user, by=request.user)
        except StudiesError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Shared with {username}." if shared else f"{username} had it already.")
    else:
        messages.error(request, "Give the username of the researcher to share with.")
    return redirect("library:collection_detail", pk=collection.pk)


@researcher_required
@require_POST
def collection_unshare_page(request, pk):
    collection = _collection_for(request, pk)
    user = get_user_model().objects.filter(username=request.POST.get("username", "")).first()
    try:
        if user is None:
            raise StudiesError("no such researcher")
        design_services.collection_unshare(collection=collection, user=user, by=request.user)
    except StudiesError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"No longer shared with {user.username}.")
    return redirect("library:collection_detail", pk=collection.pk)


@researcher_required
@require_POST
def collection_delete_page(request, pk):
    collection = _collection_for(request, pk)
    try:
        services.collection_delete(collection=collection, by=request.user)
    except StudiesError as exc:
        messages.error(request, str(exc))
        return redirect("library:collection_detail", pk=collection.pk)
    messages.success(request, f"Collection “{collection.name}” deleted.")
    return redirect("library:collection_list")


@researcher_required
def study_create_page(request):
    """The New-study page: the study, built on the collection chosen, with its judgments as reference v1."""
    form = StudyForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        study = services.study_create_on_collection(
            owner=request.user,
            name=data["name"],
            description=data["description"],
            grade_labels=data["grade_labels"],
            consent_text=data["consent_text"],
            consent_version=data["consent_version"],
            time_limit_minutes=data["time_limit_minutes"],
            collection=data["collection"],
        )
        messages.success(request, f"Study “{study.name}” created. Add its scenarios and systems next.")
        return redirect("studies:study_detail", slug=study.slug)
    return render(request, "studies/study_form.html", {"form": form})


@researcher_required
@require_POST
def study_collection_reference(request, slug):
    """Repair a study made without its collection's judgments: the owner's POST, idempotent."""
    study = get_object_or_404(studies_visible_to(request.user), slug=slug)
    if study.owner_id != request.user.pk:
        raise PermissionDenied("only the study's owner gives it its collection's judgments")
    made = reference_version_from_collection(study=study, by=request.user)
    (messages.success if made.created else messages.info)(request, made.words)
    return redirect("studies:study_detail", slug=study.slug)


@researcher_required
def study_collection(request, slug):
    """Choose the collection a study searches (before its first enrolment)."""
    study = get_object_or_404(studies_visible_to(request.user), slug=slug)
    collections = (
        collections_visible_to(request.user)
        .annotate(
            document_count=Count("documents", distinct=True), topic_count=Count("topics", distinct=True)
        )
        .order_by("name")
    )
    form = AttachForm(
        request.POST or None, collections=collections, initial={"collection": study.collection_id}
    )
    if request.method == "POST":
        if form.is_valid():
            try:
                version = services.study_collection_attach(
                    study=study, collection=form.cleaned_data["collection"], by=request.user
                )
            except StudiesError as exc:
                messages.error(request, str(exc))
            else:
                messages.success(
                    request,
                    f"The study searches “{form.cleaned_data['collection'].name}”."
                    + (f" Its judgments are reference version {version.number}." if version else ""),
                )
                return redirect("studies:study_detail", slug=study.slug)
        else:
            messages.error(request, "Choose one of the collections listed.")
    return render(
        request, "library/study_collection.html", {"study": study, "form": form, "collections": collections}
    )
