"""Participants against the reference: each participant's and each scenario's kappa (linear, quadratic) comes
with its 95% interval on the agreement page (Gwet's analytic variance, as for the assessors)."""

import numpy as np
import pytest
from django.urls import reverse

from scoring.lib import agreement, reliability
from studies.assessment import adjudication, references


def test_the_interval_of_each_participants_kappa_is_on_the_page(client, alice, sessions_study):
    # S1: P001 judged d2 = 2, d4 = 0; P002 d3 = 1, d8 = 3; the reference grades all four.
    lines = ["1 0 d2 2", "1 0 d3 2", "1 0 d4 0", "1 0 d8 3"]
    references.reference_version_import_qrels(study=sessions_study, lines=lines, path="r", created_by=alice)
    _version, per_participant, per_scenario = adjudication.participant_reference_agreement(
        study=sessions_study
    )
    s1 = per_scenario[0]
    matrix = agreement.confusion_matrix([2, 0, 1, 3], [2, 0, 2, 3], range(4))
    assert np.array_equal(s1.matrix, matrix)
    linear = reliability.cohen_kappa_estimate(matrix, "linear")
    assert linear.estimate == pytest.approx(s1.kappa_linear, abs=1e-12)
    assert s1.kappa_intervals()["linear"] == f"[{linear.ci_low:.3f}, {linear.ci_high:.3f}]"
    assert per_scenario[1].kappa_intervals() == {"linear": "n/a", "quadratic": "n/a"}  # S2: nothing judged
    client.force_login(alice)
    page = client.get(reverse("assessment:agreement", args=[sessions_study.slug])).content.decode()
    headers = "<th>κ linear</th><th>95% interval</th><th>κ quadratic</th><th>95% interval</th>"
    assert page.count(headers) == 2  # per participant and per scenario
    assert f'<td class="interval">{s1.kappa_intervals()["quadratic"]}</td>' in page
    assert f'<td class="interval">{per_participant[1].kappa_intervals()["linear"]}</td>' in page
