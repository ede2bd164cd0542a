"""Queued messages and the beat schedule name tasks by string. Every task names itself explicitly, with the
name it had when Celery derived it from the module, so moving a module renames nothing a broker may
still hold."""

import ast

from django.conf import settings

from sessionlab.celery import app

from .conftest import ROOT

NAMES = {
    "scoring.tasks.scoring_run_start_task",
    "scoring.tasks.scoring_chunk_task",
    "scoring.tasks.scoring_run_finish_task",
    "scoring.tasks.scoring_run_failed_task",
    "scoring.tasks.stale_runs_requeue_task",
    "studies.tasks.collection_index_build_task",
    "studies.tasks.assessment_pools_grow_task",
    # the overdue sweep (on the beat schedule) and the library's upload import
    "studies.tasks.overdue_sweep_task",
    "studies.tasks.collection_upload_process_task",
    # uploads whose worker stopped, failed by the beat
    "studies.tasks.stale_uploads_fail_task",
    # an LLM assessor's run over a study's pools
    "studies.tasks.llm_run_task",
    # an LLM assessor's robustness audit (issue 42)
    "studies.tasks.llm_audit_task",
    # the study planner's, registered through CELERY_IMPORTS
    "scoring.planning.tasks.power_plan_start_task",
    "scoring.planning.tasks.power_chunk_task",
    "scoring.planning.tasks.power_pool_chunk_task",
    "scoring.planning.tasks.power_pool_ready_task",
    "scoring.planning.tasks.power_plan_finish_task",
    "scoring.planning.tasks.power_plan_failed_task",
}


def _shared_task_decorators():
    for folder in ("studies", "scoring", "sessionlab"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef):
                    for decorator in node.decorator_list:
                        target = decorator.func if isinstance(decorator, ast.Call) else decorator
                        if getattr(target, "id", getattr(target, "attr", None)) == "shared_task":
                            yield path, node.name, decorator


def test_every_task_gives_its_name_explicitly():
    named = {}
    for path, function, decorator in _shared_task_decorators():
        keywords = {k.arg: k.value for k in getattr(decorator, "keywords", [])}
        assert "name" in keywords, f"{path.relative_to(ROOT)}: @shared_task of {function} has no name="
        named[function] = ast.literal_eval(keywords["name"])
    assert set(named.values()) == NAMES


def test_the_registered_names_are_the_historical_ones():
    app.loader.import_default_modules()
    registered = {name for name in app.tasks if not name.startswith("celery.")}
    assert registered == NAMES


def test_the_beat_schedule_names_a_registered_task():
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in NAMES
