"""Reference judgments: the versions of the reference and the qrels import."""

from __future__ import annotations

from rest_framework import serializers

from studies.models import (
    ReferenceJudgment,
    ReferenceVersion,
)


class ReferenceVersionSerializer(serializers.ModelSerializer):
    # The creator's user name, kept when the account is not (ReferenceVersion.creator_name).
    created_by = serializers.CharField(source="creator_name", read_only=True, default=None)
    judgment_count = serializers.IntegerField(read_only=True)
    # How the version was made: the machine rules, the assessor and the counts; {} for none.
    provenance = serializers.JSONField(source="facts", read_only=True)

    class Meta:
        model = ReferenceVersion
        fields = ["id", "number", "note", "created_by", "created_at", "judgment_count", "provenance"]


class ReferenceJudgmentSerializer(serializers.ModelSerializer):
    doc = serializers.CharField(source="document.external_id", read_only=True)

    class Meta:
        model = ReferenceJudgment
        fields = ["id", "topic_id", "doc", "grade", "source"]


class QrelsImportSerializer(serializers.Serializer):
    file = serializers.FileField(required=False, help_text="A TREC qrels file (topic iteration docid grade).")
    text = serializers.CharField(
        required=False, trim_whitespace=False, help_text="The qrels as text, instead of a file."
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")

    def validate(self, attrs):
        if ("file" in attrs) == ("text" in attrs):
            raise serializers.ValidationError("send the qrels either as `file` or as `text`")
        return attrs
