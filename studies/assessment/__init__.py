"""Expert assessment: pools, assessors, adjudication and the reference versions."""
