"""Scheduler extenders: their wire protocol and HTTP client, the calls with upstream's semantics, and the consultation that waits for them off the serial cycle."""
