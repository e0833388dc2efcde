"""CPU time and peak memory of a process, read from ``/proc`` (Linux).

Why not psutil: two numbers from two files do not need a dependency. Elsewhere (no
``/proc``), every reading is None and the report says "not measured".

* CPU seconds = ``utime + stime`` (fields 14 and 15 of ``/proc/PID/stat``, in clock
  ticks) divided by ``SC_CLK_TCK``; user and system time of the process's threads.
* Peak RSS = ``VmHWM`` of ``/proc/PID/status`` (the resident set's high-water mark over
  the process's life), in bytes.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True, slots=True)
class Usage:
    """CPU seconds of a process at one moment, and its peak RSS so far (bytes)."""

    cpu_seconds: float | None
    peak_rss_bytes: int | None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds used by ``pid`` so far, or None if unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces: split after it.
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / _TICKS


def peak_rss(pid: int) -> int | None:
    """``VmHWM`` of ``pid`` in bytes, or None if unreadable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def usage(pid: int) -> Usage:
    """Both readings for ``pid``."""
    return Usage(cpu_seconds(pid), peak_rss(pid))


def self_cpu_seconds() -> float:
    """CPU seconds of this process (the load generator and watcher)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def memory_bytes() -> int | None:
    """Total memory of the machine (``MemTotal``), or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def delta(before: float | None, after: float | None) -> float | None:
    """``after - before`` when both were read."""
    if before is None or after is None:
        return None
    return after - before
