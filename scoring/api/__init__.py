"""The scoring runs of the REST API (docs/api.md): serializers and views, mounted under
/api/studies/<study_pk>/scoring-runs/ by scoring/api_urls.py.

They follow studies/api/: a researcher reaches only the studies `studies_visible_to` gives them (404
otherwise, and for every run of another study), lists are paginated and filtered by hand-written query
parameters, and a list loads its rows in a fixed number of queries. Creating a run is
`services.scoring_run_create` (scoring is queued on commit); results are the stored SessionScore and
QueryScore rows, never recomputed here.

One module per resource: runs.py (the runs), sessions.py (a run's session scores and a session's query
scores), query_scores.py (every query score of a run, JSON or CSV), with common.py (what they share) and
renderers.py (CSVRenderer). The names are re-exported here for scoring/api_urls.py and the tests.
"""

from .common import PARTICIPANT_CODE, SCENARIO_CODE, SYSTEM_CODE, RunScoped
from .query_scores import (
    CSV_COLUMNS,
    QUERY_SCORE_FILTERS,
    QueryScoreCursor,
    QueryScoreRowSerializer,
    ScoringRunQueryScoreList,
)
from .renderers import CSVRenderer
from .runs import (
    RUN_FILTERS,
    MeasureParamsSerializer,
    ScoringRunCreateSerializer,
    ScoringRunDetail,
    ScoringRunList,
    ScoringRunMakeDefault,
    ScoringRunSerializer,
)
from .sessions import (
    SESSION_SCORE_FILTERS,
    QueryScoreSerializer,
    ScoringRunQueryList,
    ScoringRunSessionList,
    SessionScoreSerializer,
)

__all__ = [
    "CSV_COLUMNS",
    "PARTICIPANT_CODE",
    "QUERY_SCORE_FILTERS",
    "RUN_FILTERS",
    "SCENARIO_CODE",
    "SESSION_SCORE_FILTERS",
    "SYSTEM_CODE",
    "CSVRenderer",
    "MeasureParamsSerializer",
    "QueryScoreCursor",
    "QueryScoreRowSerializer",
    "QueryScoreSerializer",
    "RunScoped",
    "ScoringRunCreateSerializer",
    "ScoringRunDetail",
    "ScoringRunList",
    "ScoringRunMakeDefault",
    "ScoringRunQueryList",
    "ScoringRunQueryScoreList",
    "ScoringRunSerializer",
    "ScoringRunSessionList",
    "SessionScoreSerializer",
]
