"""`manage.py load_demo` (`make demo`): load the demo study (studies/demo.py), then score it here. It lives in
scoring because it needs both apps, and studies never imports scoring: the loader and the scoring run are
two direct calls, no signal carries a value back."""

import logging
import os

from django.core.management import call_command
from django.core.management.base import BaseCommand

from scoring.models import PowerPlan
from scoring.planning import selectors as planning_selectors
from scoring.planning import services as planning_services
from scoring.services import scoring_run_create
from sessionlab.celery import app as celery_app
from sessionlab.plurals import counted
from studies.demo import SIMULATED, demo_study_load

# Eager Celery logs "Task ... succeeded" at INFO for every simulated search; the demo's own lines must stay
# the last ones printed (sessionlab/settings.py sets the same level; this holds under any LOG_LEVEL).
QUIET_LOGGERS = ("celery.app.trace", "celery.worker.strategy", "celery.redirected")


def demo_score(*, study, user) -> str:
    """Score the demo study with the paper's parameters (weights 0-1-10-100, b 2, bq 4, top 10); says how it
    went, for the loader's first line."""
    run = scoring_run_create(study=study, created_by=user, label="the paper's parameters")
    run.refresh_from_db()  # eager Celery has already scored it; with a worker it is queued
    return f"scoring run {run.pk} is {run.status}"


# The demo's own plan (docs/planning.md, "The demo study's own design"): its 30 participants among the counts.
DEMO_PLAN_COUNTS = (10, 20, 30, 40, 60, 80, 100, 120, 140, 160, 200)


def demo_plan(*, study, user, participants: int) -> str:
    """Plan the demo study from its own scored sessions (a pilot of the default run: B against A, the
    planner's defaults otherwise); says how it went, with the curve's figures when it is done."""
    first, second = study.systems.order_by("code")[:2]
    try:
        plan, _reused = planning_services.power_plan_create(
            study=study,
            created_by=user,
            label="the demo's own plan",
            first_system=first,
            second_system=second,
            effect=PowerPlan.Effect.PILOT,
            counts=DEMO_PLAN_COUNTS,
        )
    except planning_services.PlanningError as exc:
        return f"no power plan ({exc})"
    plan.refresh_from_db()  # eager Celery has computed it; with a worker it is queued
    if plan.status != PowerPlan.Status.DONE:
        return f"power plan {plan.pk} is {plan.status}"
    curve = planning_selectors.plan_curve(plan)
    at = {point.n: point for point in curve.points}
    figures = [f"power {at[n].power:.2f} at its {n} participants" for n in (participants,) if n in at]
    figures.append(
        f"{plan.target:.0%} at {curve.smallest}" if curve.smallest else f"{plan.target:.0%} beyond {max(at)}"
    )
    return f"power plan {plan.pk} ({second.code} vs {first.code}, from these sessions) is done: " + "; ".join(
        figures
    )


class Command(BaseCommand):
    help = "Load the demo study (re-creating it if present): simulated sessions, scored; prints the logins."

    def add_arguments(self, parser):
        parser.add_argument("--participants", type=int, default=SIMULATED, help="simulated participants")
        parser.add_argument(
            "--data",
            default=None,
            help="a Cranfield folder, or 'generated' "
            "(default: $DEMO_DATA, else the shipped Cranfield collection)",
        )
        parser.add_argument(
            "--port",
            type=int,
            default=int(os.environ.get("PORT") or 8000),
            help="the port the printed links use (default: $PORT, else 8000)",
        )
        parser.add_argument(
            "--serve",
            action="store_true",
            help="then serve on 127.0.0.1:PORT, the logins staying the last lines printed",
        )

    def handle(self, *args, participants, data, port, serve, **options):
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        # Eager (no broker): kombu's "No hostname was supplied. Reverting to default 'localhost'" is no news.
        logging.getLogger("kombu.connection").setLevel(logging.ERROR)
        # The demo runs its tasks here, eagerly, as a worker would: import the tasks modules as a worker does,
        # so that the services' queueing.task_named finds them (and so does the server --serve starts).
        celery_app.loader.import_default_modules()
        loaded = demo_study_load(participants=participants, data_dir=data)
        study = loaded.study
        scoring_note = demo_score(study=study, user=loaded.researcher)
        plan_note = demo_plan(study=study, user=loaded.researcher, participants=participants)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo study “{study.name}”: {participants} simulated participants worked "
                f"{counted(loaded.sessions, 'session')} on {loaded.collection_source}; "
                f"{len(loaded.try_links)} more enrolled for you to take part (the private links below); "
                f"{scoring_note}; {plan_note}."
            )
        )
        base = f"http://127.0.0.1:{port}"
        links = "\n".join(f"         {base}{link}" for link in loaded.try_links)
        stop = "  Stop the server with Control-C.\n" if serve else ""
        self.stdout.write(
            f"\n  Study       {base}/studies/{study.slug}/\n"
            f"  Dashboards  {base}/scoring/{study.slug}/\n"
            f"  Login       {loaded.username} / {loaded.password}   (researcher)\n"
            f"  Assessor    {base}/assess/  as  assessor / {loaded.assessor_password}\n"
            f"  Take part as a participant (private links):\n{links}\n{stop}"
        )
        if serve:
            self.stdout.flush()
            # runserver's banner would follow the logins: it goes nowhere; requests are still logged (stderr).
            with open(os.devnull, "w") as devnull:
                call_command("runserver", f"127.0.0.1:{port}", use_reloader=False, stdout=devnull)
