"""The statistics chart states on every row the n it used, in its CSV and in its table: the
bootstrap row over sessions both systems' sessions, the paired rows the participants, the mixed model the
sessions."""

import csv
import io

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _csv(client, run, **query):
    url = reverse("scoring:chart_csv", args=[run.study.slug, run.pk, "statistics"])
    response = client.get(url, query)
    assert response.status_code == 200
    return list(csv.reader(io.StringIO(response.content.decode())))


@pytest.mark.parametrize("unit, bootstrap_n", [("session", "32"), ("participant", "8")])
def test_every_row_has_its_n(client, scored, unit, bootstrap_n):
    built, run = scored
    client.force_login(built.study.owner)
    header, *rows = _csv(client, run, unit=unit)
    at = header.index("n")
    assert rows and all(row[at].isdigit() and int(row[at]) > 0 for row in rows)
    (bootstrap,) = [row for row in rows if row[0].startswith("mean difference, bootstrap")]
    assert bootstrap[at] == bootstrap_n  # 16 sessions on A and 16 on B resampled; or 8 pairs
    mixed = [row for row in rows if row[0].startswith("linear mixed model")]
    assert mixed and all(row[at] == "32" for row in mixed)
    payload = client.get(
        reverse("scoring:chart_json", args=[built.study.slug, run.pk, "statistics"]), {"unit": unit}
    ).json()
    table = next(t for t in payload["figure"]["data"] if t["type"] == "table")
    assert table["header"]["values"][-1] == "n"
    assert [str(n) for n in table["cells"]["values"][-1]] == [row[at] for row in rows]
