"""Every plugin table test runs against both implementations of ``evaluate``.

``reference`` is the scalar oracle (:func:`asched.tools.reference.evaluate`); ``vectorised``
is the NumPy engine (``asched.explain.engine.evaluate``), imported lazily so that the
reference cases run even while the engine does not exist yet.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from asched.engine.result import Evaluation

# `tests` is not an installed package: make `tests.builders` importable however pytest
# was started (a `pythonpath = ["."]` pytest setting would make this unnecessary).
_ROOT = str(Path(__file__).resolve().parents[3])
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
