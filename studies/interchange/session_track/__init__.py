"""TREC Session Track logs, 2011-2014 (the 2012 layout; the other years differ in details this reader keeps).

    sessiontrack2012 > session(num, starttime?)
        > topic(num, product?, goal?, tasktype?) > subject(num)?, desc, narr?
        > interaction(num, starttime) > query, results > result(rank) > url, clueweb09id, title, snippet
                                      , clicked? > click(num, starttime, endtime) > rank
        > currentquery(starttime)? > query

Import (`session_track_import`) builds a new study from a log: one scenario per topic (topic_id = the topic
num), one system (the track's search engine), one participant per session (code ST<num>) with one assignment,
and the session with its queries, shown results (documents created in a collection by ClueWeb id, the url in
Document.extra) and its clicks as document_open/document_close events with the click times. The topic's
attributes, the session and interaction numbers and attributes, each time as written and the current query
are kept in the session's events, so `session_track_export` writes the same log back. Texts are kept byte for
byte (whitespace included).

Times: 2011-2012 write times of day without a date, placed on `day` (UTC), a time more than 12 hours earlier
than the one before it moving to the next day; 2013-2014 write seconds from the session's start (counted from
midnight of `day`), and "NA" for a time not recorded (placed at the time known before it; a click's NA end
gives no document_close).

Its qrels become the study's first reference version. The track grades -2..4 (-2: spam); the study's scale
is 0..max grade (participants judge on it) and negative grades are treated by `negative_grades`:
"keep" (default: kept as judged in the reference version, -9..-1, and each scoring formulation applies its
own rule: kanoulas2011's 2^g - 1 gives -2 a gain of -0.75, the weighted forms a gain of 0),
"clip" (-2 becomes 0, judged not relevant: this changes kanoulas2011 scores), "drop" (left out: unjudged) or
"refuse" (the import fails, naming the first such line).

The reader uses expat directly so every error names the file, the line and the element or attribute.

The modules: log (the log as read, and the shared constants), reader (the XML read and checked), timeline
(a session's times placed on one timeline), importer (the study built from a log), export (the log written).
"""

from scoring.lib.errors import InputError
from studies.interchange.session_track.export import session_track_export, session_track_stream
from studies.interchange.session_track.importer import ImportSummary, session_track_import
from studies.interchange.session_track.log import (
    DEFAULT_DAY,
    DOC_ID_TAGS,
    EVENT_PREFIX,
    NEGATIVE_GRADES,
    TRACK_GRADE_LABELS,
    Log,
)
from studies.interchange.session_track.reader import read_log, read_log_file

__all__ = [
    "DEFAULT_DAY",
    "DOC_ID_TAGS",
    "EVENT_PREFIX",
    "NEGATIVE_GRADES",
    "TRACK_GRADE_LABELS",
    "ImportSummary",
    "InputError",
    "Log",
    "read_log",
    "read_log_file",
    "session_track_export",
    "session_track_import",
    "session_track_stream",
]
