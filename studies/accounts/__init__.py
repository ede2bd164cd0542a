"""Researcher accounts: invitations (`services`), their page (`views`, `forms`) and the access checks every
researcher page is behind (`access`). Below design and every room with researcher pages."""
