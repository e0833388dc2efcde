"""Running ``python -m asched`` as a user would, for the end-to-end bench tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run_asched(*args: str, timeout: float = 170.0) -> subprocess.CompletedProcess[str]:
    """``python -m asched ARGS`` from the checkout's root (plots drawn off-screen); never
    raises on a non-zero exit (the tests assert on it)."""
    return subprocess.run(
        [sys.executable, "-m", "asched", *args],
        cwd=ROOT,
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
