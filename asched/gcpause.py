"""Python's cyclic garbage collector: paused around bulk work, and tuned for the
long-running processes (``asched run``, ``asched sim``, the benchmark's harness).

Decoding a LIST of a large cluster allocates millions of long-lived objects (parsed
JSON, then records); each allocation burst triggers collections that scan the whole
young heap and, every so often, everything alive. None of those objects is garbage, so
the scans are pure cost: measured on the initial sync of 50,000 nodes and 100,000 pods,
they were a quarter of the scheduler's sync time. Reference counting still frees what
the bulk work drops; only the cycle detector waits until the end.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

#: The cyclic GC's generation thresholds of the long-running processes (Python's default:
#: 700, 10, 10). A scheduling cycle, a served request or a created pod allocates
#: thousands of short-lived objects that reference counting frees; with the default, the
#: young generation was collected ~40 times a second at full speed. Measured on
#: SchedulingBasic 5,000 nodes / 10,000 pods: the scheduler made 398 collections taking
#: 0.86 s of its CPU with the default, 16 taking 0.21 s with these (about 13 ms each, so
#: no pause of note).
GC_THRESHOLDS: Final = (10_000, 10, 10)


def tune_gc() -> None:
    """Set :data:`GC_THRESHOLDS` (a long-running process calls it once, at start)."""
    gc.set_threshold(*GC_THRESHOLDS)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic GC for the block (re-enabled after, if it was enabled)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
