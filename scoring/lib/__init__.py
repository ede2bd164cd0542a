"""The scoring library: pure numpy measures (CG, DCG, nDCG, session DCG), their file readers, agreement and
statistics, and the `python -m scoring` command. It imports no Django and nothing of either app, so it works
on plain files without the web app."""
