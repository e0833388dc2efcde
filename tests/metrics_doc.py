"""docs/metrics.md's table of metrics, read by the tests that hold asched to it.

The table's first column is the documented metric, its second the type. A metric added to
the table is then expected by the tests that read it: exported by
:data:`asched.metrics.REGISTRY` (tests/unit/health/test_grafana_dashboard.py) and moved
by a live run (tests/integration/test_metrics_live.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, cast

DOC: Final = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
#: the header of the table of metrics
HEADER: Final = "| asched metric |"
#: ``| `name` | type ...|``: a row's first two cells
ROW: Final = re.compile(r"^\|\s*`(asched_[a-z0-9_]+)`\s*\|\s*([a-z]+)")

Kind = Literal["counter", "gauge", "histogram"]
KINDS: Final = ("counter", "gauge", "histogram")


@dataclass(frozen=True, slots=True)
class Documented:
    """One row of the table: the metric as a scrape names it, and its type."""

    name: str
    kind: Kind

    @property
    def series(self) -> str:
        """The series whose value says the metric moved: a counter's own name (its
        ``_total``), a histogram's ``_count``, a gauge's name."""
        return f"{self.name}_count" if self.kind == "histogram" else self.name


def documented_metrics(text: str | None = None) -> tuple[Documented, ...]:
    """The rows of docs/metrics.md's table of metrics, in order.

    Raises ``ValueError`` for a row that names no metric in its first cell, or a type that
    is not one of :data:`KINDS`: a table the tests cannot read is a failure, not an empty
    list."""
    lines = (DOC.read_text() if text is None else text).splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith(HEADER))
    except StopIteration:
        raise ValueError(f"docs/metrics.md has no table starting {HEADER!r}") from None
    found: list[Documented] = []
    for line in lines[start + 2 :]:  # after the header and its |---| line
        if not line.startswith("|"):
            break
        match = ROW.match(line)
        if match is None:
            raise ValueError(f"a row of the table of metrics names no metric: {line!r}")
        name, kind = match.groups()
        if kind not in KINDS:
            raise ValueError(f"{name}: type {kind!r} is not one of {KINDS}")
        found.append(Documented(name, cast(Kind, kind)))  # one of KINDS: checked above
    if not found:
        raise ValueError("docs/metrics.md's table of metrics has no rows")
    return tuple(found)
