"""A plugin whose import fails (a missing dependency)."""

from __future__ import annotations

import asched_no_such_dependency  # noqa: F401
