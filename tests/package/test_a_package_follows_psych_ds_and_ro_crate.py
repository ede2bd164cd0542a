"""A package's layout: Psych-DS's required keys in dataset_description.json, its keyword-value file names
under data/, every CSV column in variableMeasured and in codebook.csv, no panel id anywhere; its
ro-crate-metadata.json parsed by the `rocrate` library, naming every file."""

import csv
import io
import json
import zipfile

import pytest
from rocrate.rocrate import ROCrate

from scoring.lib import package_layout as layout

pytestmark = pytest.mark.django_db

PSYCH_DS_REQUIRED = {"@context", "@type", "name", "description", "variableMeasured"}


def members(package):
    with zipfile.ZipFile(package) as zipped:
        return {name: zipped.read(name) for name in zipped.namelist()}


def test_the_description_has_psych_ds_s_required_keys(package):
    description = json.loads(members(package)[layout.DESCRIPTION])
    assert PSYCH_DS_REQUIRED <= set(description)
    assert description["@context"] == "https://schema.org/" and description["@type"] == "Dataset"
    assert description["name"] == "Alice's study" and description["description"]
    for variable in description["variableMeasured"]:
        assert variable["@type"] == "PropertyValue" and variable["name"] and variable["description"]


def test_every_data_file_is_named_by_keyword_value_pairs_and_each_table_is_there(package):
    data = [name for name in members(package) if name.startswith("data/")]
    assert all(name.endswith(".csv") and layout.FILE_NAME.match(name[5:]) for name in data), data
    assert sorted(layout.table_of_file(name) for name in data) == sorted(layout.TABLES)
    assert "data/study-alicesstudy_data-shownresults_data.csv" in data


def test_every_column_of_every_csv_is_in_the_codebook_and_variable_measured(package):
    files = members(package)
    measured = {v["name"] for v in json.loads(files[layout.DESCRIPTION])["variableMeasured"]}
    codebook = {
        (row["table"], row["column"]) for row in csv.DictReader(io.StringIO(files[layout.CODEBOOK].decode()))
    }
    checked = 0
    for name, content in files.items():
        if not name.startswith("data/"):
            continue
        header = next(csv.reader(io.StringIO(content.decode())))
        table = layout.table_of_file(name)
        for column in header:
            assert column in measured, (name, column)
            assert (table, column) in codebook, (name, column)
            checked += 1
    assert checked > 100 and len(codebook) == checked


def test_no_panel_id_is_in_the_package(package):
    for name, content in members(package).items():
        if name.endswith(".csv"):
            header = next(csv.reader(io.StringIO(content.decode())))
            assert not set(header) & set(layout.PANEL_ID_COLUMNS), name


def test_the_crate_parses_with_rocrate_and_describes_every_file(package, tmp_path):
    with zipfile.ZipFile(package) as zipped:
        zipped.extractall(tmp_path / "unzipped")
    crate = ROCrate(tmp_path / "unzipped")
    assert crate.name == "Alice's study"
    described = {entity.id for entity in crate.data_entities}
    files = {name for name in members(package) if name != layout.CRATE}
    assert described == files
    sizes = {entity.id: int(entity["contentSize"]) for entity in crate.data_entities}
    assert sizes == {name: len(content) for name, content in members(package).items() if name in files}
