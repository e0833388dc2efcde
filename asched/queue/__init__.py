"""The scheduling queue: activeQ, backoffQ and the unschedulable pods (upstream semantics)."""
