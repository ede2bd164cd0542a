"""manage.py calibrate_searchers [--log FILE --qrels FILE] [-o FILE]: fit the simulated searchers to the TREC
2012 Session Track log (in SESSIONLAB_DATA unless named) and write the calibration the demo's searchers read
(studies/simulation/searcher_calibration.json; docs/planning.md, "Calibrated searchers")."""

from django.core.management.base import BaseCommand, CommandError

from scoring.lib.errors import InputError
from scoring.lib.searcher_model import CalibrationError, calibration_write
from scoring.lib.session_log_stats import tolerance_misses
from studies.interchange.session_track import behaviour
from studies.simulation import calibration


class Command(BaseCommand):
    help = "Calibrate the simulated searchers on the TREC 2012 Session Track log and write the parameters."

    def add_arguments(self, parser):
        parser.add_argument("--log", help="the Session Track XML (default: in SESSIONLAB_DATA)")
        parser.add_argument("--qrels", help="its qrels (default: in SESSIONLAB_DATA)")
        parser.add_argument("--seed", type=int, default=behaviour.SEED)
        parser.add_argument("--sessions", type=int, default=behaviour.SESSIONS, help="simulated sessions")
        parser.add_argument("-o", "--output", default=str(calibration.CALIBRATION_FILE))

    def handle(self, *args, **options):
        try:
            log_path, qrels_path = options["log"], options["qrels"]
            if not (log_path and qrels_path):
                shared_log, shared_qrels = behaviour.shared_log_paths()
                log_path, qrels_path = log_path or shared_log, qrels_path or shared_qrels
            result = behaviour.calibration_compute(
                log_path=log_path,
                qrels_path=qrels_path,
                seed=options["seed"],
                sessions=options["sessions"],
                progress=lambda line: self.stderr.write(line),
            )
        except (CalibrationError, InputError, OSError) as error:
            raise CommandError(str(error)) from None
        calibration_write(result, options["output"])
        self.stdout.write(calibration.calibration_sentence(result))
        for miss in tolerance_misses(result.simulated, result.log, result.tolerance):
            self.stdout.write(f"outside the tolerance: {miss}")
        self.stdout.write(f"written to {options['output']}")
