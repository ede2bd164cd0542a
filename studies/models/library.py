"""A collection's topics and judgments as uploaded, and the uploads themselves (docs/setting-up-a-study.md).

A collection's topics and qrels belong to no study until one is built on it: a study then picks its scenarios
from the topics (their text pre-filled) and receives the judgments as its first reference version.
A CollectionUpload is the row a browser upload's Celery task reports its progress on, so the progress bar
reads the database and survives a page reload.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from studies.models.core import Collection, Document


class CollectionTopic(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="topics")
    topic_id = models.CharField(max_length=100)
    title = models.TextField()
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)

    class Meta:
        ordering = ["collection", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "topic_id"], name="collection_topic_unique"),
        ]

    def __str__(self):
        return f"{self.topic_id}: {self.title}"


class CollectionJudgment(models.Model):
    """A graded judgment as the collection's qrels gave it (after the upload's grade map)."""

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="judgments", db_index=False
    )  # served by the unique (collection, topic, document)
    topic_id = models.CharField(max_length=100)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    grade = models.SmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "topic_id", "document"], name="collection_judgment_unique"
            ),
        ]

    def __str__(self):
        return f"{self.topic_id} {self.document_id} = {self.grade}"


class CollectionUpload(models.Model):
    """One upload from the browser, from the files received to the indexes built."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        READING = "reading", "Reading and checking the files"
        WRITING = "writing", "Storing the documents"
        INDEXING = "indexing", "Building the search indexes"
        DONE = "done", "Ready"
        FAILED = "failed", "Failed"

    FORMATS = [
        ("cranfield", "Cranfield folder, as a zip"),
        ("trec", "TREC documents (<DOC> … </DOC>)"),
        ("jsonl", "JSON lines, one document a line"),
    ]

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="collection_uploads"
    )
    name = models.CharField(max_length=200, help_text="The collection's name, once imported.")
    description = models.TextField(blank=True)
    format = models.CharField(max_length=20, choices=FORMATS)
    # file role ("documents", "topics", "qrels") -> the name the researcher's file had.
    files = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)  # percent, 0..100
    stage = models.CharField(max_length=300, blank=True)
    error = models.TextField(blank=True)
    collection = models.ForeignKey(
        Collection, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__lte=100), name="collection_upload_progress_0_100"),
            models.CheckConstraint(
                condition=Q(status__in=["queued", "reading", "writing", "indexing", "done", "failed"]),
                name="collection_upload_status_known",
            ),
        ]

    def __str__(self):
        return f"upload {self.pk} of {self.name!r} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


class IndexVersion(models.Model):
    """Which version of a (collection, configuration) search index is current, cluster-wide. Every node's
    index folder is a cache of it: a node whose copy is missing or of another number builds its own
    (studies/search/index_versions.py). `number` goes up at each explicit build (manage.py build_index, an
    upload, the admin); `documents`, `built_at` and `built_on` say the first node that built this number."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="index_versions")
    configuration = models.CharField(max_length=60)
    number = models.PositiveIntegerField(default=1)
    documents = models.PositiveIntegerField(null=True, blank=True)  # None: this number is built nowhere yet
    built_at = models.DateTimeField(null=True, blank=True)
    built_on = models.CharField(max_length=200, blank=True)  # the host name of the node that built it first

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "configuration"], name="index_version_one_per_index"
            )
        ]

    def __str__(self):
        return f"collection {self.collection_id} {self.configuration} v{self.number}"
