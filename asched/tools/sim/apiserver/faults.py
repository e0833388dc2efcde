"""Injected faults: what the sim does wrong on purpose, set by flags or ``POST /admin/faults``.

==============================  ======================================================
``watchCutAfterSeconds``        every watch is cut (connection closed, no final chunk)
                                this long after it started; ``null`` disables
``bindErrorRate``               fraction of binding POSTs answered with an error
                                instead of binding (0..1)
``bindErrorCode``               500 (InternalError) or 409 (Conflict) for those
``latencyMs``                   added to every request before it is handled
``history``                     shrink (or grow) every resource's watch history to this
                                many events, to provoke ``410 Expired``
``volumeBindingPaused``         the simulated PV controller and hollow provisioner
                                stop binding and provisioning claims (PV phases still
                                move); work queued meanwhile runs when unpaused
``volumeBindingDelaySeconds``   seconds (real time, not scaled) the PV controller
                                waits before each round of binding work
==============================  ======================================================

Restarts are an action, not a setting: ``POST /admin/restart``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

_KEYS = {
    "watchCutAfterSeconds": "watch_cut_after",
    "bindErrorRate": "bind_error_rate",
    "bindErrorCode": "bind_error_code",
    "latencyMs": "latency_ms",
    "history": "history",
    "volumeBindingPaused": "volume_binding_paused",
    "volumeBindingDelaySeconds": "volume_binding_delay",
}


@dataclass(slots=True)
class Faults:
    """The current fault settings (mutable: the admin endpoint changes them live)."""

    watch_cut_after: float | None = None
    bind_error_rate: float = 0.0
    bind_error_code: int = 500
    latency_ms: float = 0.0
    history: int | None = None
    volume_binding_paused: bool = False
    volume_binding_delay: float = 0.0
    _random: random.Random = field(default_factory=random.Random, repr=False)
    _listeners: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after every :meth:`update` (the PV controller resumes on it)."""
        self._listeners.append(callback)

    def update(self, data: Any) -> None:
        """Apply a JSON document of settings; raise ValueError naming a bad one."""
        if not isinstance(data, dict):
            raise ValueError("the body must be a JSON object of fault settings")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise ValueError(f"unknown fault settings {unknown}; known: {sorted(_KEYS)}")
        cut = data.get("watchCutAfterSeconds", self.watch_cut_after)
        rate = data.get("bindErrorRate", self.bind_error_rate)
        code = data.get("bindErrorCode", self.bind_error_code)
        latency = data.get("latencyMs", self.latency_ms)
        history = data.get("history", self.history)
        paused = data.get("volumeBindingPaused", self.volume_binding_paused)
        delay = data.get("volumeBindingDelaySeconds", self.volume_binding_delay)
        if cut is not None and (not isinstance(cut, int | float) or cut <= 0):
            raise ValueError(f"watchCutAfterSeconds must be a positive number or null, got {cut!r}")
        if not isinstance(rate, int | float) or not 0 <= rate <= 1:
            raise ValueError(f"bindErrorRate must be in [0, 1], got {rate!r}")
        if code not in (409, 500):
            raise ValueError(f"bindErrorCode must be 409 or 500, got {code!r}")
        if not isinstance(latency, int | float) or latency < 0:
            raise ValueError(f"latencyMs must be >= 0, got {latency!r}")
        if history is not None and (not isinstance(history, int) or history < 0):
            raise ValueError(f"history must be an integer >= 0, got {history!r}")
        if not isinstance(paused, bool):
            raise ValueError(f"volumeBindingPaused must be true or false, got {paused!r}")
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
            raise ValueError(f"volumeBindingDelaySeconds must be >= 0, got {delay!r}")
        self.watch_cut_after = float(cut) if cut is not None else None
        self.bind_error_rate = float(rate)
        self.bind_error_code = int(code)
        self.latency_ms = float(latency)
        self.history = history
        self.volume_binding_paused = paused
        self.volume_binding_delay = float(delay)
        for callback in self._listeners:
            callback()

    def as_json(self) -> JSON:
        """The settings in the admin endpoint's shape."""
        return {
            "watchCutAfterSeconds": self.watch_cut_after,
            "bindErrorRate": self.bind_error_rate,
            "bindErrorCode": self.bind_error_code,
            "latencyMs": self.latency_ms,
            "history": self.history,
            "volumeBindingPaused": self.volume_binding_paused,
            "volumeBindingDelaySeconds": self.volume_binding_delay,
        }

    def bind_fails(self) -> bool:
        """Draw whether this binding call fails."""
        return self.bind_error_rate > 0 and self._random.random() < self.bind_error_rate
