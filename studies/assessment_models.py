"""Kept only because migration 0003_assessment names `studies.assessment_models.new_order_seed` (a field's
default); migrations do not change. The models are in studies/models/assessment.py."""

from studies.models.assessment import new_order_seed  # noqa: F401
