"""Signals other apps listen to, so studies never imports them (scoring re-scores on these). Each only
announces that something happened: no sender reads what its listeners return (a value that must come back
is a direct call to a module below both, as the plan's rows are: studies/design/rows.py).

- `reference_version_committed(sender=ReferenceVersion, version=..., study_id=...)`: a new reference version
  and all its judgments are committed. Sent from `transaction.on_commit`, never inside the transaction that
  wrote them, so a listener that reads the version sees every row.
- `sessions_finished(sender=SearchSession, study_id=..., session_ids=[...])`: sessions ended or were
  withdrawn, inside the transaction that changed them, so their scores are stale (a listener queues its work
  on commit).
- `participant_withdrawn(sender=Participant, study_id=..., participant_id=..., session_ids=[...],
  audit_entry_id=...)`: a participant withdrew and their data in studies are deleted, inside the transaction
  that deleted them (participation.participant_withdraw). A listener deletes what it holds of them in that
  same transaction (scoring: their session scores in every run, the power plans resampling them), so a
  listener that fails rolls the whole withdrawal back; it may add what it deleted to the withdrawal's audit
  row (AuditEntry `audit_entry_id`, under its own key of `detail`), which the sender never reads back.
- `study_opened(sender=Study, study=...)`: a researcher opened the study page, before it reads anything;
  without a beat (eager mode) participation's sweep listens and closes what is overdue (docs/recruitment.md),
  since the design pages cannot import participation (which imports design).
"""

from django.dispatch import Signal

reference_version_committed = Signal()
sessions_finished = Signal()
participant_withdrawn = Signal()
study_opened = Signal()
