"""Signals other apps listen to, so studies never imports them (scoring re-scores on these).

- `reference_version_committed(sender=ReferenceVersion, version=..., study_id=...)`: a new reference version
  and all its judgments are committed. Sent from `transaction.on_commit`, never inside the transaction that
  wrote them, so a listener that reads the version sees every row.
- `sessions_finished(sender=SearchSession, study_id=..., session_ids=[...])`: sessions ended or were withdrawn,
  inside the transaction that changed them, so their scores are stale (a listener queues its work on commit).
- `study_opened(sender=Study, study=...)`: a researcher opened the study page, before it reads anything; without
  a beat (eager mode) participation's sweep listens and closes what is overdue (docs/recruitment.md), since the
  design pages cannot import participation (which imports design).
- `demo_study_loaded(sender=Study, study=..., user=...)`: the demo study is committed and simulated; each
  listener may return a line for the loader to print (scoring returns its run's status).
"""

from django.dispatch import Signal

reference_version_committed = Signal()
sessions_finished = Signal()
demo_study_loaded = Signal()
study_opened = Signal()
