"""The planner's one error: a plan that cannot be made as asked."""


class PlanningError(ValueError):
    """A plan that cannot be made as asked; the message names the field."""
