"""Participants against the reference: each participant's and each scenario's row has every coefficient the
assessor pairs have (percent agreement, Cohen's kappa, Gwet's AC1/AC2), each with its interval, on the page
and in the API; the point figures the exclusion rule reads are the same numbers."""

import pytest
from django.urls import reverse

from scoring.lib import agreement
from studies.assessment import adjudication, references
from studies.assessment.agreement_estimates import PAIR_COEFFICIENTS, pair_estimates
from tests.interchange.api_helpers import client_for

# S1: P001 judged d2 = 2, d4 = 0; P002 d3 = 1, d8 = 3 (the sessions_study fixture).
REFERENCE = ["1 0 d2 2", "1 0 d3 2", "1 0 d4 0", "1 0 d8 3"]


@pytest.fixture
def referenced(sessions_study, alice):
    references.reference_version_import_qrels(
        study=sessions_study, lines=REFERENCE, path="r", created_by=alice
    )
    return sessions_study


def test_each_row_carries_the_pair_coefficients_of_its_table(referenced):
    _version, per_participant, per_scenario = adjudication.participant_reference_agreement(study=referenced)
    s1 = per_scenario[0]
    matrix = agreement.confusion_matrix([2, 0, 1, 3], [2, 0, 2, 3], range(4))
    assert s1.estimates == pair_estimates(matrix)
    assert [e.coefficient for e in s1.estimates][4] == "Gwet's AC1"
    # the figures the exclusion rule reads are the coefficients' estimates
    assert s1.estimates[0].estimate == pytest.approx(s1.percent, abs=1e-12)
    assert s1.estimates[2].estimate == pytest.approx(s1.kappa_linear, abs=1e-12)
    assert s1.estimates[3].estimate == pytest.approx(s1.kappa_quadratic, abs=1e-12)
    p001 = per_participant[0]
    assert p001.n == 2 and len(p001.estimates) == len(PAIR_COEFFICIENTS)
    # S2: nothing judged: every coefficient is there and undefined
    s2 = per_scenario[1]
    assert s2.n == 0 and all(e.n == 0 for e in s2.estimates)
    assert s2.gwet_texts()["ac1"] == {"estimate": "n/a", "se": "n/a", "interval": "n/a", "p": "n/a"}


def test_the_page_shows_ac1_and_ac2_with_intervals_and_every_coefficient(client, alice, referenced):
    _version, per_participant, per_scenario = adjudication.participant_reference_agreement(study=referenced)
    client.force_login(alice)
    page = client.get(reverse("assessment:agreement", args=[referenced.slug])).content.decode()
    headers = "<th>AC1</th><th>95% interval</th><th>AC2 quadratic</th><th>95% interval</th>"
    assert page.count(headers) == 2
    ac1 = per_scenario[0].estimates[4]
    texts = per_scenario[0].gwet_texts()
    assert texts["ac1"]["interval"] == f"[{ac1.ci_low:.3f}, {ac1.ci_high:.3f}]"
    assert f'<td>{texts["ac1"]["estimate"]}</td><td class="interval">{texts["ac1"]["interval"]}</td>' in page
    assert f'<td class="interval">{per_participant[1].gwet_texts()["ac2"]["interval"]}</td>' in page
    assert "P001 against the reference: coefficients with 95% intervals" in page
    assert "S1 against the reference: coefficients with 95% intervals" in page


def test_the_exclusion_rule_reads_the_same_figures(client, alice, referenced):
    from studies.assessment.exclusion import exclusion_apply

    referenced.exclusion_min_agreement = 0.99
    referenced.exclusion_measure = "kappa_linear"
    referenced.exclusion_min_documents = 2
    referenced.save(update_fields=["exclusion_min_agreement", "exclusion_measure", "exclusion_min_documents"])
    outcome = exclusion_apply(study=referenced)
    _version, per_participant, _scenarios = adjudication.participant_reference_agreement(study=referenced)
    below = {row.label for row in per_participant if row.n >= 2 and row.estimates[2].estimate < 0.99}
    assert set(outcome.excluded) == below == {"P002"}


def test_the_api_gives_each_row_with_its_coefficients(referenced, alice):
    body = client_for(alice).get(f"/api/studies/{referenced.pk}/agreement/").json()
    against = body["participants_against_reference"]
    assert against["version"] == 1
    assert [row["code"] for row in against["per_participant"]] == ["P001", "P002"]
    s1 = against["per_scenario"][0]
    assert (s1["code"], s1["n"]) == ("S1", 4)
    _version, _participants, per_scenario = adjudication.participant_reference_agreement(study=referenced)
    assert s1["confusion_matrix"] == per_scenario[0].matrix.tolist()
    ac1 = s1["estimates"][4]
    assert ac1["coefficient"] == "Gwet's AC1"
    assert [ac1["estimate"], ac1["ci_low"], ac1["ci_high"]] == pytest.approx(
        [
            per_scenario[0].estimates[4].estimate,
            per_scenario[0].estimates[4].ci_low,
            per_scenario[0].estimates[4].ci_high,
        ]
    )
    assert against["per_scenario"][1]["estimates"][1]["estimate"] is None  # S2: nothing judged


def test_without_a_reference_the_api_says_null(sessions_study, alice):
    body = client_for(alice).get(f"/api/studies/{sessions_study.pk}/agreement/").json()
    assert body["participants_against_reference"] is None
