"""gc_paused: the cyclic GC is off inside the block and as it was after."""

from __future__ import annotations

import gc
from contextlib import nullcontext

import pytest

from asched.gcpause import gc_paused


@pytest.mark.parametrize("enabled_before", [True, False], ids=["was-enabled", "was-disabled"])
@pytest.mark.parametrize("raises", [False, True], ids=["returns", "raises"])
def test_gc_paused_restores_the_previous_state(enabled_before: bool, raises: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled_before else gc.disable)()
    try:
        with pytest.raises(ValueError) if raises else nullcontext(), gc_paused():
            assert not gc.isenabled()
            if raises:
                raise ValueError("bulk work failed")
        assert gc.isenabled() is enabled_before
    finally:
        (gc.enable if was else gc.disable)()
