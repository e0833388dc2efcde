"""Reading the scheduler's profile: where its CPU went, as self and inclusive shares.

``py-spy record --format raw`` writes collapsed stacks, one line per distinct stack::

    outer (file.py:12);inner (other.py:40) 57

(frames root first, then the sample count). :func:`collapsed` sums them per function
(``name (file)``, line numbers dropped): *self* = samples with the function on top,
*inclusive* = samples with it anywhere on the stack (counted once per stack).
:func:`cprofile` does the same from a ``python -m cProfile -o`` file (pstats' ``tottime``
and ``cumtime``, as shares of the total).
"""

from __future__ import annotations

import pstats
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_LINE = re.compile(r":\d+\)$")


@dataclass(frozen=True, slots=True)
class Entry:
    """One function's share of the profile (fractions of all samples or of total time)."""

    function: str
    self_share: float
    inclusive_share: float


def _function(frame: str) -> str:
    """``inner (asched/x.py:40)`` -> ``inner (asched/x.py)``."""
    return _LINE.sub(")", frame.strip())


def collapsed(path: Path, *, top: int = 25) -> tuple[int, list[Entry], list[Entry]]:
    """Total samples, and the ``top`` functions by self and by inclusive share."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_function(f) for f in stack.split(";") if f]
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        for function in set(frames):
            inclusive[function] += count
    if total == 0:
        return 0, [], []

    def entries(counter: Counter[str]) -> list[Entry]:
        return [
            Entry(name, own[name] / total, inclusive[name] / total)
            for name, _ in counter.most_common(top)
        ]

    return total, entries(own), entries(inclusive)


def cprofile(path: Path, *, top: int = 25) -> tuple[float, list[Entry], list[Entry]]:
    """Total seconds, and the ``top`` functions by own time and by cumulative time."""
    stats = pstats.Stats(str(path))
    table = stats.stats  # type: ignore[attr-defined]
    rows: list[tuple[str, float, float]] = []
    for (filename, line, name), (_cc, _nc, tottime, cumtime, _callers) in table.items():
        del line
        rows.append((f"{name} ({filename})", tottime, cumtime))
    total = sum(r[1] for r in rows) or 1.0
    by_self = sorted(rows, key=lambda r: -r[1])[:top]
    by_cum = sorted(rows, key=lambda r: -r[2])[:top]
    return (
        total,
        [Entry(n, s / total, c / total) for n, s, c in by_self],
        [Entry(n, s / total, c / total) for n, s, c in by_cum],
    )


def summary(path: Path, *, top: int = 25, kind: str | None = None) -> str:
    """A plain-text summary of a py-spy raw file or a cProfile file (``kind``:
    ``"cprofile"`` or ``"py-spy"``; None: a ``.prof`` file is cProfile's)."""
    if kind == "cprofile" or (kind is None and path.suffix == ".prof"):
        seconds, by_self, by_total = cprofile(path, top=top)
        head = f"cProfile: {seconds:.1f} s of own time"
    else:
        samples, by_self, by_total = collapsed(path, top=top)
        head = f"py-spy: {samples} samples"
    lines = [head, "", "by self (own) share:"]
    lines += [f"  {e.self_share:6.1%}  {e.inclusive_share:6.1%}  {e.function}" for e in by_self]
    lines += ["", "by inclusive share:"]
    lines += [f"  {e.inclusive_share:6.1%}  {e.self_share:6.1%}  {e.function}" for e in by_total]
    return "\n".join(lines)
