"""Plugins asched does not model yet: their PreFilter is a plain Skip.

VolumeRestrictions, NodeVolumeLimits and VolumeZone always skip.
"""

from __future__ import annotations

from asched.reference.cycle import Cycle
from asched.reference.plugins.base import SKIP, Plugin, PreFilterOutcome


class AlwaysSkip(Plugin):
    """A volume plugin with nothing to check for pods without claims."""

    implements_score = False

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        return SKIP
