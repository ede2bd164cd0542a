"""The participant's way: rules, steps, the event batch, simulation and the participant's pages."""
