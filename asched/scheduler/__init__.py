"""Live scheduling: ingest of watch events, the serial cycle, binding, reporting, the app."""
