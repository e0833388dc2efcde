"""The PV controller on objects that were there before it started (a ``--snapshot``)."""

from __future__ import annotations

import pytest

from asched.tools.sim.server import SimConfig

from .conftest import TIME_SCALE, TOKEN, Api
from .storage import CLAIMS, PVS, claim, volume, wait_until

_PENDING_PV = {**volume("pv-old", "2Gi"), "status": {"phase": "Pending"}}
_CLAIM = {
    **claim("c-old", "1Gi", storage_class=""),
    "metadata": {"name": "c-old", "namespace": "default"},
    "status": {"phase": "Pending"},
}


@pytest.fixture
def sim_config() -> SimConfig:
    return SimConfig(
        nodes=1, token=TOKEN, time_scale=TIME_SCALE, seed=7, snapshot=(_PENDING_PV, _CLAIM)
    )


async def test_snapshot_objects_are_synced_at_start(api: Api):
    bound = await wait_until(api, CLAIMS, "c-old", lambda o: o["status"].get("phase") == "Bound")
    assert bound["spec"]["volumeName"] == "pv-old"
    assert bound["status"]["capacity"] == {"storage": "2Gi"}  # the PV's, not the request
    pv = await wait_until(api, PVS, "pv-old", lambda o: o["status"].get("phase") == "Bound")
    assert pv["spec"]["claimRef"]["uid"] == bound["metadata"]["uid"]
