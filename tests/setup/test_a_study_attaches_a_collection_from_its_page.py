from studies.design import services
from studies.models import Collection, CollectionJudgment, CollectionTopic, Document


def with_topics(owner, name="Docs"):
    collection = Collection.objects.create(name=name, owner=owner)
    docs = Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{n}", text="wing") for n in range(1, 4)
    )
    CollectionTopic.objects.create(
        collection=collection, topic_id="1", title="Wings", description="About wings"
    )
    CollectionJudgment.objects.bulk_create(
        [
            CollectionJudgment(collection=collection, topic_id="1", document=docs[0], grade=3),
            CollectionJudgment(collection=collection, topic_id="1", document=docs[1], grade=0),
            CollectionJudgment(
                collection=collection, topic_id="1", document=docs[2], grade=7
            ),  # off the 0..3 scale
        ]
    )
    return collection


def test_attaching_a_collection_gives_the_study_its_judgments(client, alice, study):
    collection = with_topics(alice)
    client.force_login(alice)
    assert "Docs" in client.get(f"/collections/for-study/{study.slug}/").content.decode()
    response = client.post(
        f"/collections/for-study/{study.slug}/", {"collection": collection.pk}, follow=True
    )
    assert "Its judgments are reference version 1." in response.content.decode()
    study.refresh_from_db()
    assert study.collection == collection
    version = study.reference_versions.get()
    assert sorted(version.judgments.values_list("document__external_id", "grade")) == [("d1", 3), ("d2", 0)]


def test_another_labs_collection_cannot_be_attached(client, alice, charlie, study):
    collection = with_topics(charlie)
    client.force_login(alice)
    response = client.post(
        f"/collections/for-study/{study.slug}/", {"collection": collection.pk}, follow=True
    )
    assert "Choose one of the collections listed." in response.content.decode()
    study.refresh_from_db()
    assert study.collection is None


def test_the_collection_is_fixed_after_the_first_enrolment(client, alice, designed_study):
    collection = with_topics(alice)
    services.participants_enrol(study=designed_study, count=2)
    client.force_login(alice)
    page = client.post(
        f"/collections/for-study/{designed_study.slug}/", {"collection": collection.pk}, follow=True
    ).content.decode()
    assert "already has participants" in page
    designed_study.refresh_from_db()
    assert designed_study.collection is None


def test_a_researcher_of_another_study_gets_a_404(client, alice, charlie, study):
    client.force_login(charlie)
    assert client.get(f"/collections/for-study/{study.slug}/").status_code == 404
