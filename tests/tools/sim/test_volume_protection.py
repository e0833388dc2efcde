"""Protection finalizers (as objects from a real cluster carry them): a claim in use by a
scheduled pod stays until the pod is gone; a volume stays while it is Bound."""

from __future__ import annotations

from typing import Any

from .conftest import Api, binding, pod
from .storage import CLAIMS, NS, PVS, claim, create, volume, wait_until

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"


def _protected(body: dict[str, Any], finalizer: str) -> dict[str, Any]:
    return {**body, "metadata": {**body["metadata"], "finalizers": [finalizer]}}


async def _gone(api: Api, collection: str, name: str) -> None:
    since = (await api.get(collection)).body["metadata"]["resourceVersion"]
    if (await api.get(f"{collection}/{name}")).status == 404:
        return
    await api.watch(
        f"{collection}?watch=1&resourceVersion={since}&fieldSelector=metadata.name={name}",
        until=lambda seen: seen[-1]["type"] == "DELETED",
    )


async def test_claim_in_use_stays_until_its_pod_is_gone(api: Api):
    await create(api, PVS, _protected(volume("pv-a"), PV_PROTECTION))
    await create(api, CLAIMS, _protected(claim("c"), PVC_PROTECTION))
    await wait_until(api, CLAIMS, "c", lambda o: o["status"].get("phase") == "Bound")
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}]
    await create(api, f"{NS}/pods", pod("user", volumes=volumes))
    assert (await api.post(f"{NS}/pods/user/binding", binding("user", "node-0"))).status == 201

    assert (await api.delete(f"{CLAIMS}/c")).status == 200
    # the scheduled pod still uses it: marked, finalizer kept
    marked = await wait_until(api, CLAIMS, "c", lambda o: "deletionTimestamp" in o["metadata"])
    assert marked["metadata"]["finalizers"] == [PVC_PROTECTION]
    assert (await api.delete(f"{PVS}/pv-a")).status == 200
    kept = (await api.get(f"{PVS}/pv-a")).body  # Bound: pv-protection holds it
    assert (kept["metadata"]["finalizers"], kept["status"]["phase"]) == ([PV_PROTECTION], "Bound")

    assert (await api.delete(f"{NS}/pods/user", {"gracePeriodSeconds": 0})).status == 200
    await _gone(api, CLAIMS, "c")  # no pod uses it any more
    await _gone(api, PVS, "pv-a")  # its claim is gone: Released, then unprotected


async def test_unused_claim_goes_at_once(api: Api):
    # an unscheduled pod does not hold the claim (the kubelet would not start it)
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}]
    await create(api, f"{NS}/pods", pod("waiting", volumes=volumes))
    await create(api, CLAIMS, _protected(claim("c", storage_class=""), PVC_PROTECTION))
    assert (await api.delete(f"{CLAIMS}/c")).status == 200
    await _gone(api, CLAIMS, "c")
