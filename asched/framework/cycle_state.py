"""Per-cycle scratch storage keyed by ``"<Plugin>/<what>"`` (upstream's CycleState)."""

from __future__ import annotations

from typing import Any, Final, Protocol, runtime_checkable

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


@runtime_checkable
class StateData(Protocol):
    """A stored value that changes after it was written (upstream's ``StateData.Clone``):
    :func:`copy_state` stores its clone in the copy. Values without ``clone`` are never
    changed in place once written, so copies share them."""

    def clone(self) -> StateData:
        """An independent copy: changing one leaves the other as it was."""
        ...


def copy_state(state: CycleState) -> CycleState:
    """A copy of ``state`` whose changes leave ``state`` as it was (its skip sets copied,
    its :class:`StateData` values cloned, the others shared)."""
    out = CycleState()
    # what ``isinstance(value, StateData)`` checks, without the protocol's slow path
    out._data = {
        key: value.clone() if callable(getattr(type(value), "clone", None)) else value
        for key, value in state._data.items()
    }
    out.skip_filter = set(state.skip_filter)
    out.skip_score = set(state.skip_score)
    return out
