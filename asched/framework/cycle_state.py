"""Per-cycle scratch storage keyed by ``"<Plugin>/<what>"`` (upstream's CycleState)."""

from __future__ import annotations

from typing import Any, Final

#: ``bool[table.size]``: the rows taking part in this cycle's scoring (the feasible,
#: sampled nodes upstream's PreScore receives), written before the cross-row scores run.
SCORED_ROWS: Final = "framework/scored-rows"


class CycleState:
    """A dict with the few operations plugins need; one per scheduling attempt."""

    __slots__ = ("_data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value stored under ``key``; KeyError if a PreFilter/PreScore did not run."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)
