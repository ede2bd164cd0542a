"""The assessors' agreement as the API shows it (GET /api/studies/<id>/agreement/): the blocks of
studies.assessment.adjudication.assessor_agreement, every coefficient an AgreementEstimate. Output only."""

from __future__ import annotations

import math

from rest_framework import serializers


def _number(value: float) -> float | None:
    """A figure as JSON: null where it is undefined (NaN), never a made-up 0."""
    return None if value is None or not math.isfinite(value) else float(value)


class AgreementEstimateSerializer(serializers.Serializer):
    coefficient = serializers.CharField(help_text='e.g. "Gwet\'s AC2 (quadratic weights)"')
    estimate = serializers.FloatField(allow_null=True, help_text="null when undefined")
    se = serializers.FloatField(allow_null=True, help_text="standard error")
    ci_low = serializers.FloatField(allow_null=True, help_text="lower end of the confidence interval")
    ci_high = serializers.FloatField(allow_null=True, help_text="upper end (capped at 1)")
    p_value = serializers.FloatField(
        allow_null=True, help_text="two-sided, against no agreement beyond chance"
    )
    n = serializers.IntegerField(help_text="documents the figure is computed on")
    method = serializers.CharField(help_text="how se and interval were obtained (analytic or bootstrap)")

    def to_representation(self, instance):
        return {
            "coefficient": instance.coefficient,
            "estimate": _number(instance.estimate),
            "se": _number(instance.se),
            "ci_low": _number(instance.ci_low),
            "ci_high": _number(instance.ci_high),
            "p_value": _number(instance.p_value),
            "n": int(instance.n),
            "method": instance.method,
        }


class AgreementPairSerializer(serializers.Serializer):
    first = serializers.CharField(help_text="the first assessor's username (the matrix's rows)")
    second = serializers.CharField(help_text="the second assessor's username (the matrix's columns)")
    n = serializers.IntegerField(help_text="documents both graded")
    confusion_matrix = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="counts, rows the first assessor's grades and columns the second's, in the scale's order",
    )
    estimates = AgreementEstimateSerializer(many=True)

    def to_representation(self, instance):
        return {
            "first": instance.first,
            "second": instance.second,
            "n": instance.n,
            "confusion_matrix": instance.matrix.tolist(),
            "estimates": AgreementEstimateSerializer(instance.estimates, many=True).data,
        }


class AgreementBlockSerializer(serializers.Serializer):
    scenario = serializers.CharField(
        allow_null=True, help_text="the scenario's code; null for the block over every scenario"
    )
    documents = serializers.IntegerField(
        help_text="pool documents with two grades or more: the n of every coefficient over all assessors"
    )
    graded_once = serializers.IntegerField(
        help_text="pool documents graded by one assessor alone, left out of the figures over all assessors"
    )
    all_assessors = AgreementEstimateSerializer(many=True, help_text="every coefficient over all assessors")
    pairs = AgreementPairSerializer(
        many=True, help_text="each pair of assessors on the documents both graded"
    )

    def to_representation(self, instance):
        return {
            "scenario": instance.scenario.code if instance.scenario else None,
            "documents": instance.units,
            "graded_once": instance.graded_once,
            "all_assessors": AgreementEstimateSerializer(instance.estimates, many=True).data,
            "pairs": AgreementPairSerializer(instance.pairs, many=True).data,
        }


class ReferenceAgreementRowSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="the participant's code, or the scenario's")
    n = serializers.IntegerField(help_text="documents they graded that the reference grades")
    missed = serializers.IntegerField(
        help_text="shown to them, relevant in the reference, not judged relevant by them"
    )
    confusion_matrix = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="counts, rows their grades and columns the reference's, in the scale's order",
    )
    estimates = AgreementEstimateSerializer(many=True)

    def to_representation(self, instance):
        return {
            "code": instance.label,
            "n": instance.n,
            "missed": instance.missed,
            "confusion_matrix": instance.matrix.tolist(),
            "estimates": AgreementEstimateSerializer(instance.estimates, many=True).data,
        }


class ReferenceAgreementSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="the reference version's number (the newest)")
    per_participant = ReferenceAgreementRowSerializer(many=True)
    per_scenario = ReferenceAgreementRowSerializer(many=True)


class StudyAgreementSerializer(serializers.Serializer):
    scale = serializers.ListField(child=serializers.IntegerField(), help_text="the study's grades, in order")
    level = serializers.FloatField(help_text="the confidence level of every interval")
    blocks = AgreementBlockSerializer(many=True, help_text="one per scenario, then overall (scenario null)")
    participants_against_reference = ReferenceAgreementSerializer(
        allow_null=True,
        help_text="participants' own grades against the newest reference version; null without one",
    )
