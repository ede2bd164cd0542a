"""API views, one module per resource (studies, collections, design, participants, sessions, references,
participant_api) on shared bases in `common`: generic views for plain reads and CRUD, explicit views (input
serializer -> service -> output serializer) where a write has side effects. Every researcher view is scoped to
one study the caller may see (`visible_study`, 404 otherwise); list querysets load their relations in a fixed
number of queries. studies/api/urls.py imports the modules themselves."""
