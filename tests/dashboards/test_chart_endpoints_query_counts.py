"""Chart endpoints read a run's stored results in a fixed number of queries, whatever the study's size, and a
warm chart is served from the cache under the run's generation."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from scoring import services
from scoring.dashboards.registry import CHARTS

pytestmark = pytest.mark.django_db

# Django's session and user, the study (access check), the run, then at most two reads of results.
COLD_MAX = 6
# The attention table and the meta-evaluation (which puts the same figures beside the ratings) read four of
# the study's tables besides the scores (session times, stretches away, results on screen, pages' scroll):
# still a fixed number, whatever the study's size.
COLD_MAX_OF = {"attention": COLD_MAX + 4, "meta-evaluation": COLD_MAX + 4, "meta-rankings": COLD_MAX + 4}
WARM_MAX = 4


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize("chart", list(CHARTS))
def test_each_chart_is_a_fixed_number_of_queries(client, scored, chart, django_assert_max_num_queries):
    built, run = scored
    client.force_login(built.study.owner)
    url = reverse("scoring:chart_json", args=[built.study.slug, run.pk, chart])
    with django_assert_max_num_queries(COLD_MAX_OF.get(chart, COLD_MAX)):
        assert client.get(url).status_code == 200
    with django_assert_max_num_queries(WARM_MAX):
        assert client.get(url).status_code == 200


def test_the_cached_chart_changes_when_the_scores_do(
    client, scored, collection_docs, django_capture_on_commit_callbacks
):
    from .conftest import reference_version

    built, run = scored
    client.force_login(built.study.owner)
    url = reverse("scoring:chart_csv", args=[built.study.slug, run.pk, "statistics"])
    first = client.get(url).content
    assert client.get(url).content == first
    grades = {topic: {doc: 3 for doc in g} for topic, g in built.grades.items()}
    with django_capture_on_commit_callbacks(execute=True):
        reference_version(built.study, grades, docs=collection_docs)
        services.reference_version_changed(study_id=built.study.pk)
    assert client.get(url).content != first
