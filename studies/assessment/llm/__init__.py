"""Language-model assessors: settings and secret key (setup.py, keys.py), the prompt and the
grade it asks for (prompts.py), one request to an OpenAI-compatible server (client.py) and runs over a
study's pools (runs.py). docs/assessing.md, "Language-model assessors"."""
