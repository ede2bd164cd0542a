"""Planning a study before recruiting: power curves by Monte Carlo on the study's own design
(docs/planning.md).

services.py writes plans and their chunks, tasks.py runs them on Celery, selectors.py reads a plan's curve,
charts.py draws it, views.py and urls.py are the planner's pages. The math is scoring/lib/power.py.
"""
