"""The scoring dashboards: the figure builders (charts/), the registry of charts by name and their options
(registry.py), and the pages and one JSON/CSV endpoint per chart (views.py). Templates stay in
templates/scoring/, the script in static/js/charts.js."""
