"""Plugins asched does not model yet: their PreFilter is a guard or a plain Skip.

VolumeBinding rejects pods that use the feature
(:func:`asched.framework.plugins._guards.guard_reason`) and skips every other pod; it
never contributes a score. VolumeRestrictions, NodeVolumeLimits and VolumeZone always
skip (pods with claims are already rejected by the VolumeBinding guard).
"""

from __future__ import annotations

from asched.framework.plugins import _guards
from asched.framework.status import Status
from asched.reference.cycle import Cycle
from asched.reference.plugins.base import SKIP, Plugin, PreFilterOutcome


class Guarded(Plugin):
    """A plugin whose PreFilter is a guard; named at construction."""

    implements_score = False

    def __init__(self, name: str) -> None:
        self.plugin_name = name

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        reason = _guards.guard_reason(self.plugin_name, cycle.pod)
        return SKIP if reason is None else PreFilterOutcome(Status.unresolvable(reason))

    def pre_score(self, cycle: Cycle) -> bool:
        return False


class AlwaysSkip(Plugin):
    """A volume plugin with nothing to check for pods without claims."""

    implements_score = False

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        return SKIP
