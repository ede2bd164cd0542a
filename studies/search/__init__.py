"""Collections and search: the engines, the study's systems and collection import."""
