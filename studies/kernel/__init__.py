"""The kernel of the studies app: what design and participation both need, below both of them (tokens, the
participant's step and state, the deadline, gold pairs, the event log's reads). It imports neither."""
