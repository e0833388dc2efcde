"""The volume plugins' table tests run against both implementations of ``evaluate``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asched.engine.result import Evaluation

_ROOT = str(Path(__file__).resolve().parents[4])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

Evaluate = Callable[..., Evaluation]


@pytest.fixture(params=["reference", "vectorised"])
def evaluate(request: Any) -> Evaluate:
    """``evaluate(snapshot, pod, profile, *, seed=0) -> Evaluation`` of one implementation."""
    if request.param == "reference":
        from asched.tools.reference import evaluate as reference

        return reference
    from asched.explain.engine import evaluate as vectorised

    return vectorised
