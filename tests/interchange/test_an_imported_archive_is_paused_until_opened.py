"""A study imported from an archive arrives paused, with or without recruitment settings: its data came with
it, and it takes no one new until its researcher opens it. Before, one without recruitment settings had no
status, which reads as open, so it enrolled at once."""

import json

import pytest

from studies.design import services
from studies.design.lifecycle import study_status_change
from studies.errors import EnrolmentRefusedError
from studies.interchange.archive import study_archive_import
from studies.models import Recruitment

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("with_recruitment", [False, True])
def test_an_imported_archive_is_paused_and_enrols_once_opened(archive, alice, with_recruitment):
    data = json.loads(archive.read_text())
    data["recruitment"] = {"panel": "prolific"} if with_recruitment else None
    archive.write_text(json.dumps(data, indent=1))
    study = study_archive_import(path=archive, owner=alice, name="copy")
    study.refresh_from_db()
    assert study.status == "paused" and study.status_changed_at is not None
    assert Recruitment.objects.filter(study=study).exists() is with_recruitment
    before = study.participants.count()
    with pytest.raises(EnrolmentRefusedError, match="paused"):
        services.participants_enrol(study=study, count=1)
    study_status_change(study=study, status="open", by=alice)
    assert len(services.participants_enrol(study=study, count=1)) == 1
    assert study.participants.count() == before + 1
