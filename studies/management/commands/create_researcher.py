"""manage.py create_researcher NAME [--email ADDRESS] [--password-stdin]: a researcher account as
docs/security.md describes (is_staff, no superuser flag, no model permissions), with a one-time password
printed once, or read from the first line of standard input."""

import sys

from django.core.management.base import BaseCommand, CommandError

from studies.accounts.services import AccountError, researcher_create


class Command(BaseCommand):
    help = "Create a researcher account (not a superuser) and print its one-time password (docs/security.md)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="", help="the researcher's e-mail address (optional)")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input instead of generating one",
        )

    def handle(self, *args, **options):
        password = None
        if options["password_stdin"]:
            password = sys.stdin.readline().rstrip("\r\n")
            if not password:
                raise CommandError("no password on standard input")
        try:
            user, password = researcher_create(
                username=options["username"], email=options["email"], password=password
            )
        except AccountError as refusal:
            raise CommandError(str(refusal)) from None
        self.stdout.write(f"Researcher {user.username} created: log in at /accounts/login/.")
        if not options["password_stdin"]:
            self.stdout.write(f"One-time password: {password}")
            self.stdout.write("Change it after the first login at /accounts/password/.")
