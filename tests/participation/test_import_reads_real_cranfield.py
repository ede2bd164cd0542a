"""The real Cranfield collection (the copy shipped in studies/demo_data) through `import_collection`."""

from collections import Counter

from django.core.management import call_command

from studies.models import Collection, ReferenceJudgment


def test_it_imports_1400_documents_and_the_judgments_through_the_default_mapping(cranfield_folder, study):
    call_command(
        "import_collection",
        str(cranfield_folder),
        format="cranfield",
        name="Cranfield",
        study=study.slug,
        scenarios="1,2",
    )
    collection = Collection.objects.get(name="Cranfield")
    assert collection.documents.count() == 1400
    study.refresh_from_db()
    assert study.collection == collection
    version = study.reference_versions.get()
    assert version.number == 1
    grades = Counter(ReferenceJudgment.objects.filter(version=version).values_list("grade", flat=True))
    # cranqrel's codes 1, 2, 3+4, -1 become grades 3, 2, 1, 0.
    assert grades == {3: 128, 2: 387, 1: 1097, 0: 225}
    assert sorted(study.scenarios.values_list("topic_id", flat=True)) == ["1", "2"]
    first = study.scenarios.get(topic_id="1")
    assert first.code == "T1" and "similarity laws" in first.text


def test_it_applies_a_grade_map_given_on_the_command_line(cranfield_folder, study):
    call_command(
        "import_collection",
        str(cranfield_folder),
        format="cranfield",
        name="Binary",
        study=study.slug,
        grade_map="1:1,2:1,3:1,4:0,-1:0",
    )
    grades = Counter(ReferenceJudgment.objects.values_list("grade", flat=True))
    assert grades == {
        1: 128 + 387 + 1097 - grades_of_code_4(cranfield_folder),
        0: 225 + grades_of_code_4(cranfield_folder),
    }


def grades_of_code_4(cranfield_folder):
    lines = (cranfield_folder / "cranqrel").read_text().split()
    return sum(1 for code in lines[2::3] if code == "4")
