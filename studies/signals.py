"""Signals other apps listen to, so studies never imports them (scoring re-scores on these).

- `reference_version_committed(sender=ReferenceVersion, version=..., study_id=...)`: a new reference version
  and all its judgments are committed. Sent from `transaction.on_commit`, never inside the transaction that
  wrote them, so a listener that reads the version sees every row.
"""

from django.dispatch import Signal

reference_version_committed = Signal()
