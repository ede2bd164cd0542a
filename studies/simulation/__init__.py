"""Simulated participants: the demo's searchers, the planner's strategies and their calibration."""
