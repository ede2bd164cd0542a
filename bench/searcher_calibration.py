"""Benchmark figures of the calibrated searchers: the demo study's simulated sessions in the calibration's
terms beside the TREC 2012 Session Track log, and the spread of their normalized final gain (the default
scoring run's, per system and overall). It prints figures only.

    DEBUG=1 [SQLITE_PATH=... | DATABASE_URL=...] .venv/bin/python bench/searcher_calibration.py

Needs the demo study in that database (`make demo-data`). Regenerate the calibration itself with
`manage.py calibrate_searchers` (SESSIONLAB_DATA set).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEMO_SLUG = "demo-ecir-2008"


def spread(values) -> str:
    data = np.asarray(values, dtype=float)
    q10, q25, q50, q75, q90 = np.quantile(data, (0.1, 0.25, 0.5, 0.75, 0.9))
    return (
        f"n {data.size}, mean {data.mean():.4f}, sd {data.std(ddof=1):.4f}, min {data.min():.4f}, "
        f"q10 {q10:.4f}, q25 {q25:.4f}, median {q50:.4f}, q75 {q75:.4f}, q90 {q90:.4f}, "
        f"max {data.max():.4f}, "
        f"zero {np.mean(data == 0):.0%}"
    )


def main() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessionlab.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from scoring.models import ScoringRun, SessionScore
    from studies.models import Study
    from studies.simulation.calibration import calibration_sentence, study_behaviour_sentence

    study = Study.objects.get(slug=DEMO_SLUG)
    run = (
        ScoringRun.objects.filter(study=study).order_by("pk").first()
    )  # the loader's: the paper's parameters
    scores = SessionScore.objects.filter(run=run, unjudged=False)
    print(calibration_sentence())
    print(study_behaviour_sentence(scores.values_list("session_id", flat=True)))
    print(f"normalized final gain, run {run.pk} ({run.label}):")
    print(f"  all: {spread(list(scores.values_list('normalized_final', flat=True)))}")
    for code in study.systems.order_by("code").values_list("code", flat=True):
        values = list(scores.filter(system__code=code).values_list("normalized_final", flat=True))
        print(f"  {code}: {spread(values)}")
    per_participant: dict[int, list[float]] = {}
    for participant, value in scores.values_list("participant_id", "normalized_final"):
        per_participant.setdefault(participant, []).append(value)
    print(f"  participant means: {spread([np.mean(v) for v in per_participant.values()])}")
    influence(scores, study)


def influence(scores, study) -> None:
    """How far one participant moves the plan: the closed-form participants for 80% power (paired t-test,
    two-sided, alpha 0.05) on all participants' paired differences (B - A of their means), and with each one
    left out in turn."""
    from scoring.lib.power import PowerError, paired_t_smallest_n

    first, second = study.systems.order_by("code").values_list("code", flat=True)[:2]
    means: dict[int, dict[str, list[float]]] = {}
    for participant, code, value in scores.values_list("participant_id", "system__code", "normalized_final"):
        means.setdefault(participant, {}).setdefault(code, []).append(value)
    differences = np.array(
        [np.mean(m[second]) - np.mean(m[first]) for m in means.values() if first in m and second in m]
    )

    def planned(values) -> int | None:
        try:
            return paired_t_smallest_n(float(values.mean()), float(values.std(ddof=1)), 0.8)
        except PowerError:
            return None

    left_out = [planned(np.delete(differences, i)) for i in range(differences.size)]
    known = sorted(n for n in left_out if n is not None)
    print(
        f"paired differences {second} - {first}: n {differences.size}, mean {differences.mean():.4f}, "
        f"sd {differences.std(ddof=1):.4f}, d {differences.mean() / differences.std(ddof=1):.2f}; "
        f"80% power at {planned(differences)} participants (closed form); one participant left out: "
        f"{known[0] if known else None} to {known[-1] if known else None}"
        f"{'' if len(known) == len(left_out) else f' ({len(left_out) - len(known)} left-outs unplannable)'}"
    )
    # The case: one real participant scoring 0.29 on one system and about 0 on the other.
    for added in (0.29, -0.29):
        print(
            f"  with one more participant whose paired difference is {added:+.2f}: "
            f"80% power at {planned(np.append(differences, added))} participants"
        )


if __name__ == "__main__":
    main()
