"""Collections get an owner and the researchers they are shared with; assessors of another lab get invitations.

Existing collections: the owner of the earliest study using one becomes its owner, and it is shared with the
owners of the other studies using it, so no study's owner loses a collection they built on. A collection no
study uses gets no owner: "admin only" (superusers see every collection and can give it an owner or share it).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def owners_from_studies(apps, schema_editor):
    Collection = apps.get_model("studies", "Collection")
    Study = apps.get_model("studies", "Study")
    for collection in Collection.objects.filter(owner__isnull=True):
        owners = list(
            dict.fromkeys(
                Study.objects.filter(collection=collection)
                .order_by("created_at", "id")
                .values_list("owner_id", flat=True)
            )
        )
        if owners:
            collection.owner_id = owners[0]
            collection.save(update_fields=["owner"])
            collection.shared_with.add(*owners[1:])


class Migration(migrations.Migration):
    dependencies = [
        ("studies", "0005_redundant_foreign_key_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="collection",
            name="owner",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="owned_collections",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="collection",
            name="shared_with",
            field=models.ManyToManyField(
                blank=True, related_name="shared_collections", to=settings.AUTH_USER_MODEL
            ),
        ),
        migrations.CreateModel(
            name="AssessorInvitation",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("invited_at", models.DateTimeField()),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Waiting for the assessor"),
                            ("accepted", "Accepted"),
                            ("declined", "Declined"),
                        ],
                        default="pending",
                        max_length=20,
                    ),
                ),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
                (
                    "invited_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "study",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assessor_invitations",
                        to="studies.study",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="assessor_invitations",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-invited_at", "id"],
                "constraints": [
                    models.UniqueConstraint(fields=("study", "user"), name="assessor_invitation_once"),
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["pending", "accepted", "declined"])),
                        name="assessor_invitation_status_known",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("answered_at__isnull", True), ("status", "pending")),
                            models.Q(
                                models.Q(("status", "pending"), _negated=True), ("answered_at__isnull", False)
                            ),
                            _connector="OR",
                        ),
                        name="assessor_invitation_answer_has_time",
                    ),
                ],
            },
        ),
        migrations.RunPython(owners_from_studies, migrations.RunPython.noop),
    ]
