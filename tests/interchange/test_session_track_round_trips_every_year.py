"""A Session Track log of any year 2011-2014 imports and exports back as read: every session, interaction,
result, click and time equal to an independent parse of the input (xml.etree, not the app's reader). 2011-2012
write times of day; from 2013 on times are seconds from the session's start and a click's end may be NA. Texts
are kept byte for byte, leading and trailing whitespace included (14 queries of the 2012 log have some)."""

import datetime as dt
import xml.etree.ElementTree as ET

import pytest

from studies.interchange import ImportFailure
from studies.interchange.session_track import session_track_export, session_track_import
from studies.models import Event, Query, ShownResult

pytestmark = pytest.mark.django_db


def independent_parse(data: bytes):
    """The log as plain values read by xml.etree: every attribute, text and child, in file order."""
    root = ET.fromstring(data)

    def leaves(element):
        return [(child.tag, dict(child.attrib), child.text or "") for child in element]

    sessions = []
    for session in root.findall("session"):
        topic = session.find("topic")
        current = session.find("currentquery")
        sessions.append(
            {
                "attrs": dict(session.attrib),
                "topic": (dict(topic.attrib), leaves(topic)),
                "interactions": [
                    {
                        "attrs": dict(interaction.attrib),
                        "query": interaction.find("query").text or "",
                        "results": [
                            (dict(r.attrib), leaves(r)) for r in interaction.iterfind("results/result")
                        ],
                        "clicks": [
                            (dict(c.attrib), leaves(c)) for c in interaction.iterfind("clicked/click")
                        ],
                    }
                    for interaction in session.findall("interaction")
                ],
                "current": None
                if current is None
                else (dict(current.attrib), current.find("query").text or ""),
            }
        )
    return root.tag, sessions


def log_2013() -> bytes:
    """A log in the 2013 layout: seconds from the session's start, clueweb12id, a userid, an interaction type,
    a second page of results (ranks 11..), clicks whose end is NA, a session without a start time, texts with
    surrounding whitespace, and a click with a child this app does not model (<docno>)."""

    def result(rank, doc, title=None):
        return (
            f'<result rank="{rank}"><url>http://example.org/{doc}</url><clueweb12id>clueweb12-{doc}'
            f"</clueweb12id><title>{title or 'Title ' + doc}</title>"
            f"<snippet>about {doc} ...</snippet></result>"
        )

    first_page = "".join(
        result(r, f"00{r:02d}-01", " padded title " if r == 2 else None) for r in range(1, 11)
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<sessiontrack2013>
<session num="1" starttime="0" userid="7">
  <topic num="38"><desc>Find out about  tax-free savings. </desc></topic>
  <interaction num="1" starttime="4.434" type="reformulate">
    <query> roth ira limits </query>
    <results>{first_page}</results>
    <clicked>
      <click num="1" starttime="20.5" endtime="83.021"><rank>2</rank></click>
      <click num="2" starttime="143.512957" endtime="NA"><rank>5</rank></click>
    </clicked>
  </interaction>
  <interaction num="2" starttime="150.000" type="page">
    <query> roth ira limits </query>
    <results>{"".join(result(r, f"00{r:02d}-02") for r in range(11, 14))}</results>
    <clicked><click num="1" starttime="151.25" endtime="NA"><rank>12</rank>\
<docno>clueweb12-0012-02</docno></click>
    </clicked>
  </interaction>
  <currentquery starttime="160.75"><query>roth ira income limits 2013</query></currentquery>
</session>
<session num="2" userid="9">
  <topic num="41"><desc>Compare two phones.</desc></topic>
  <interaction num="1" starttime="2.5">
    <query>phone a vs phone b</query>
    <results>{result(1, "0100-00")}{result(2, "0101-00")}</results>
  </interaction>
  <currentquery><query>phone a vs phone b battery</query></currentquery>
</session>
</sessiontrack2013>
""".encode()


@pytest.fixture
def path_2013(tmp_path):
    path = tmp_path / "sessiontrack2013.xml"
    path.write_bytes(log_2013())
    return path


def test_a_2013_log_imports_and_exports_as_read(alice, path_2013):
    summary = session_track_import(path=path_2013, owner=alice, name="TREC 2013", collection_name="ClueWeb12")
    assert (summary.sessions, summary.interactions, summary.results, summary.clicks) == (2, 3, 15, 3)
    exported = session_track_export(study=summary.study)
    assert independent_parse(exported) == independent_parse(log_2013())
    assert b'endtime="NA"' in exported and b'starttime="143.512957"' in exported


def test_seconds_from_the_start_are_placed_on_the_timeline_and_na_is_no_dwell(alice, path_2013):
    study = session_track_import(path=path_2013, owner=alice, name="TREC 2013", day=dt.date(2013, 5, 1)).study
    midnight = dt.datetime(2013, 5, 1, tzinfo=dt.UTC)
    first = Query.objects.get(
        session__assignment__participant__study=study,
        session__assignment__participant__code="ST001",
        position=1,
    )
    assert first.issued_at == midnight + dt.timedelta(seconds=4.434)
    assert first.session.started_at == midnight
    assert first.session.ended_at == midnight + dt.timedelta(seconds=160.75)
    events = Event.objects.filter(participant__study=study, session=first.session)
    opened = events.filter(type="document_open").order_by("sequence")
    assert [e.client_time for e in opened] == [
        midnight + dt.timedelta(seconds=s) for s in (20.5, 143.512957, 151.25)
    ]
    closes = events.filter(type="document_close")
    assert [c.payload["data"]["dwell_ms"] for c in closes] == [62521]  # the two NA ends have no close
    assert opened[1].payload["data"]["times"] == {"start": "143.512957", "end": "NA"}
    # The second page's ranks are kept, so a click on rank 12 is the document shown at 12.
    assert opened[2].payload["data"]["doc"] == "clueweb12-0012-02"
    assert ShownResult.objects.get(query__session=first.session, query__position=2, rank=12).page == 2
    # A session without a start time starts at its first time.
    second = Query.objects.get(
        session__assignment__participant__study=study,
        session__assignment__participant__code="ST002",
        position=1,
    )
    assert second.session.started_at == second.issued_at == midnight + dt.timedelta(seconds=2.5)


def test_texts_keep_their_whitespace(alice, path_2013):
    study = session_track_import(path=path_2013, owner=alice, name="TREC 2013").study
    texts = set(
        Query.objects.filter(session__assignment__participant__study=study).values_list("text", flat=True)
    )
    assert " roth ira limits " in texts
    assert (
        ShownResult.objects.filter(
            query__session__assignment__participant__study=study, title=" padded title "
        ).count()
        == 1
    )
    assert study.scenarios.get(topic_id="38").text == "Find out about  tax-free savings. "


@pytest.mark.needs_data
def test_the_2012_log_round_trips_to_an_independent_parse(alice, session_track_2012):
    log = session_track_2012 / "sessiontrack2012.xml"
    study = session_track_import(path=log, owner=alice, name="TREC 2012").study
    original = independent_parse(log.read_bytes())
    assert independent_parse(session_track_export(study=study)) == original
    # The 14 queries written with surrounding whitespace (7 of interactions, 7 current queries) are stored so.
    texts = [i["query"] for s in original[1] for i in s["interactions"]] + [
        s["current"][1] for s in original[1]
    ]
    padded = sorted(t for t in texts if t != t.strip())
    assert len(padded) == 14
    stored = list(
        Query.objects.filter(session__assignment__participant__study=study).values_list("text", flat=True)
    )
    stored += [
        e.payload["data"]["text"]
        for e in Event.objects.filter(participant__study=study, type="current_query")
    ]
    assert sorted(t for t in stored if t != t.strip()) == padded


def test_a_log_mixing_notations_is_refused_naming_the_line(alice, tmp_path):
    data = log_2013().replace(b'starttime="150.000"', b'starttime="10:02:30.000"')
    path = tmp_path / "mixed.xml"
    path.write_bytes(data)
    with pytest.raises(ImportFailure) as failure:
        session_track_import(path=path, owner=alice, name="mixed")
    line = data[: data.index(b"10:02:30")].count(b"\n") + 1
    assert str(failure.value).startswith(
        f"{path}:{line}: interaction@starttime: '10:02:30.000' mixes notations"
    )
    assert not Query.objects.exists()


def test_a_time_that_is_no_time_names_the_attribute(alice, tmp_path):
    path = tmp_path / "bad.xml"
    path.write_bytes(log_2013().replace(b'starttime="20.5"', b'starttime="soon"'))
    with pytest.raises(ImportFailure) as failure:
        session_track_import(path=path, owner=alice, name="bad")
    assert "click@starttime: 'soon' is not a time of day" in str(failure.value)
