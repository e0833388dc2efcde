"""Gang scheduling: all-or-nothing groups of pods (issue 13)."""
