"""The simulated PV controller, spoken to over HTTP: Immediate binding, pre-bound claims, the
completion of a binding the scheduler started, and the pause fault."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .conftest import Api
from .storage import (
    CLAIMS,
    CLASSES,
    PVS,
    claim,
    create,
    events_about,
    storage_class,
    volume,
    wait_for_event,
    wait_until,
)

BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


def _phase(phase: str) -> Any:
    return lambda obj: (obj.get("status") or {}).get("phase") == phase


async def test_new_volume_becomes_available(api: Api):
    created = await create(api, PVS, volume("pv-a"))
    assert created["status"]["phase"] == "Pending"  # as the API server stores it
    found = await wait_until(api, PVS, "pv-a", _phase("Available"))
    assert "claimRef" not in found["spec"]


@pytest.mark.parametrize(
    ("volumes", "wanted", "expected"),
    [
        # 1Gi, 5Gi and 10Gi all hold 2Gi: the smallest that fits wins
        pytest.param(
            [volume("pv-1", "1Gi"), volume("pv-5", "5Gi"), volume("pv-10", "10Gi")],
            claim("c", "2Gi"),
            "pv-5",
            id="smallest volume that fits",
        ),
        # RWX is not among pv-rwo's modes; pv-both has RWO and RWX
        pytest.param(
            [
                volume("pv-rwo", "1Gi"),
                volume("pv-both", "2Gi", modes=("ReadWriteOnce", "ReadWriteMany")),
            ],
            claim("c", "1Gi", modes=("ReadWriteMany",)),
            "pv-both",
            id="access modes are a subset of the volume's",
        ),
        pytest.param(
            [volume("pv-fast", storage_class="fast"), volume("pv-none", "2Gi")],
            claim("c", storage_class=""),
            "pv-none",
            id="class must match, empty class only empty",
        ),
        pytest.param(
            [
                volume("pv-red", labels={"color": "red"}),
                volume("pv-blue", labels={"color": "blue"}),
            ],
            claim("c", selector={"matchLabels": {"color": "blue"}}),
            "pv-blue",
            id="selector picks by label",
        ),
        pytest.param(
            [volume("pv-block", volumeMode="Block"), volume("pv-fs", "2Gi")],
            claim("c"),
            "pv-fs",
            id="volume mode must match (claim defaults to Filesystem)",
        ),
        # node affinity is not looked at for Immediate binding, as upstream
        pytest.param(
            [
                volume(
                    "pv-elsewhere",
                    nodeAffinity={
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": "kubernetes.io/hostname",
                                            "operator": "In",
                                            "values": ["nowhere"],
                                        }
                                    ]
                                }
                            ]
                        }
                    },
                )
            ],
            claim("c"),
            "pv-elsewhere",
            id="node affinity ignored",
        ),
    ],
)
async def test_immediate_claim_binds_to_best_volume(api: Api, volumes, wanted, expected):
    for body in volumes:
        await create(api, PVS, body)
    for body in volumes:
        await wait_until(api, PVS, body["metadata"]["name"], _phase("Available"))
    made = await create(api, CLAIMS, wanted)
    bound = await wait_until(api, CLAIMS, "c", _phase("Bound"))
    chosen = await wait_until(api, PVS, expected, _phase("Bound"))
    assert bound["spec"]["volumeName"] == expected
    assert bound["metadata"]["annotations"][BIND_COMPLETED] == "yes"
    assert bound["metadata"]["annotations"][BOUND_BY_CONTROLLER] == "yes"
    assert bound["status"]["capacity"] == chosen["spec"]["capacity"]
    assert bound["status"]["accessModes"] == chosen["spec"]["accessModes"]
    ref = chosen["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"]) == (
        "PersistentVolumeClaim",
        "default",
        "c",
        made["metadata"]["uid"],
    )
    assert chosen["metadata"]["annotations"][BOUND_BY_CONTROLLER] == "yes"


async def test_claim_without_match_stays_pending_with_an_event(api: Api):
    await create(api, PVS, volume("pv-small", "1Gi"))
    await wait_until(api, PVS, "pv-small", _phase("Available"))
    await create(api, CLAIMS, claim("c", "2Gi", storage_class=""))
    await wait_for_event(api, "c", "FailedBinding")
    assert await events_about(api, "c") == [
        (
            "Normal",  # sic, as kube-controller-manager records it
            "FailedBinding",
            "no persistent volumes available for this claim and no storage class is set",
        )
    ]
    assert (await api.get(f"{CLAIMS}/c")).body["status"] == {"phase": "Pending"}
    assert (await api.get(f"{PVS}/pv-small")).body["status"]["phase"] == "Available"


async def test_pre_bound_claim_binds_to_its_volume(api: Api):
    # pv-big would be the only fit for a plain 1Gi claim too; pv-named is smaller but
    # the claim names it: the name wins, and the claim gets no bound-by-controller
    await create(api, PVS, volume("pv-big", "10Gi"))
    await create(api, CLAIMS, claim("c", "1Gi", volumeName="pv-named"))
    await create(api, PVS, volume("pv-named", "1Gi"))  # created after the claim
    bound = await wait_until(api, CLAIMS, "c", _phase("Bound"))
    assert bound["spec"]["volumeName"] == "pv-named"
    assert bound["metadata"]["annotations"] == {BIND_COMPLETED: "yes"}
    named = await wait_until(api, PVS, "pv-named", _phase("Bound"))
    assert named["spec"]["claimRef"]["uid"] == bound["metadata"]["uid"]
    assert named["metadata"]["annotations"] == {BOUND_BY_CONTROLLER: "yes"}
    assert (await api.get(f"{PVS}/pv-big")).body["status"]["phase"] == "Available"


async def test_volume_pre_bound_by_user_without_uid(api: Api):
    ref = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "c"}
    await create(api, PVS, volume("pv-kept", claimRef=ref))
    kept = await wait_until(api, PVS, "pv-kept", _phase("Available"))
    assert "uid" not in kept["spec"]["claimRef"]
    await create(api, CLAIMS, claim("c"))
    bound = await wait_until(api, CLAIMS, "c", _phase("Bound"))
    assert bound["spec"]["volumeName"] == "pv-kept"
    # the user chose the volume: IsVolumeBoundToClaim held, so no bound-by-controller on it
    volume_now = await wait_until(api, PVS, "pv-kept", _phase("Bound"))
    assert BOUND_BY_CONTROLLER not in (volume_now["metadata"].get("annotations") or {})
    assert volume_now["spec"]["claimRef"]["uid"] == bound["metadata"]["uid"]


async def _scheduler_prebinds(api: Api, name: str, claim_obj: dict[str, Any]) -> None:
    """What the scheduler's PreBind writes for a static binding: the PV's claimRef and
    bound-by-controller."""
    current = (await api.get(f"{PVS}/{name}")).body
    meta = claim_obj["metadata"]
    current["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "namespace": "default",
        "name": meta["name"],
        "uid": meta["uid"],
        "apiVersion": "v1",
        "resourceVersion": meta["resourceVersion"],
    }
    current["metadata"].setdefault("annotations", {})[BOUND_BY_CONTROLLER] = "yes"
    reply = await api.call("PUT", f"{PVS}/{name}", current)
    assert reply.status == 200, reply.body


async def test_completes_a_binding_the_scheduler_started(api: Api):
    await create(api, CLASSES, storage_class("local", "kubernetes.io/no-provisioner", wait=True))
    await create(api, PVS, volume("pv-local", storage_class="local"))
    await wait_until(api, PVS, "pv-local", _phase("Available"))
    made = await create(api, CLAIMS, claim("c", storage_class="local"))
    # WaitForFirstConsumer: the controller leaves it to the scheduler
    waiting = await wait_for_event(api, "c", "WaitForFirstConsumer")
    assert (waiting["type"], waiting["message"]) == (
        "Normal",
        "waiting for first consumer to be created before binding",
    )
    assert (await api.get(f"{CLAIMS}/c")).body["status"] == {"phase": "Pending"}
    assert (await api.get(f"{PVS}/pv-local")).body["status"]["phase"] == "Available"
    await _scheduler_prebinds(api, "pv-local", made)
    bound = await wait_until(api, CLAIMS, "c", _phase("Bound"))
    assert bound["spec"]["volumeName"] == "pv-local"
    assert bound["metadata"]["annotations"] == {BIND_COMPLETED: "yes", BOUND_BY_CONTROLLER: "yes"}
    assert bound["status"]["capacity"] == {"storage": "1Gi"}
    assert (await wait_until(api, PVS, "pv-local", _phase("Bound")))["spec"]["claimRef"][
        "uid"
    ] == made["metadata"]["uid"]


async def test_pause_holds_binding_until_resumed(api: Api):
    await create(api, CLASSES, storage_class("local", "kubernetes.io/no-provisioner", wait=True))
    await create(api, PVS, volume("pv-local", storage_class="local"))
    await wait_until(api, PVS, "pv-local", _phase("Available"))
    made = await create(api, CLAIMS, claim("c", storage_class="local"))
    settings = await api.post("/admin/faults", {"volumeBindingPaused": True})
    assert settings.body["volumeBindingPaused"] is True
    await _scheduler_prebinds(api, "pv-local", made)
    # paused: the claim is not completed however long we wait (watch until the deadline)
    with pytest.raises(TimeoutError):
        await wait_until(api, CLAIMS, "c", _phase("Bound"), deadline=0.3)
    pending = (await api.get(f"{CLAIMS}/c")).body
    assert "volumeName" not in pending["spec"]
    assert (await api.get(f"{PVS}/pv-local")).body["status"]["phase"] == "Available"
    await api.post("/admin/faults", {"volumeBindingPaused": False})
    bound = await wait_until(api, CLAIMS, "c", _phase("Bound"))
    assert bound["spec"]["volumeName"] == "pv-local"


async def test_delay_slows_binding(api: Api):
    await api.post("/admin/faults", {"volumeBindingDelaySeconds": 0.2})
    loop = asyncio.get_running_loop()
    started = loop.time()  # the controller's wait starts once the PV is stored, after this
    await create(api, PVS, volume("pv-a"))
    await wait_until(api, PVS, "pv-a", _phase("Available"))
    assert loop.time() - started >= 0.2


async def test_deleted_claim_releases_its_volume(api: Api):
    await create(api, PVS, volume("pv-a"))
    await create(api, CLAIMS, claim("c"))
    await wait_until(api, PVS, "pv-a", _phase("Bound"))
    assert (await api.delete(f"{CLAIMS}/c")).status == 200
    released = await wait_until(api, PVS, "pv-a", _phase("Released"))
    assert released["spec"]["claimRef"]["name"] == "c"  # Retain: the ref stays


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        pytest.param({"volumeBindingPaused": 1}, "volumeBindingPaused", id="paused not a boolean"),
        pytest.param(
            {"volumeBindingDelaySeconds": -1}, "volumeBindingDelaySeconds", id="negative delay"
        ),
    ],
)
async def test_bad_volume_fault_settings(api: Api, settings, field):
    reply = await api.post("/admin/faults", settings)
    assert (reply.status, reply.reason) == (400, "BadRequest")
    assert field in (reply.message or "")


async def test_claim_naming_a_volume_bound_elsewhere(api: Api):
    await create(api, PVS, volume("pv-a"))
    await create(api, CLAIMS, claim("first"))
    await wait_until(api, PVS, "pv-a", _phase("Bound"))
    await create(api, CLAIMS, claim("second", volumeName="pv-a"))
    event = await wait_for_event(api, "second", "FailedBinding")
    assert (event["type"], event["message"]) == (
        "Warning",
        'volume "pv-a" already bound to a different claim.',
    )
    assert (await api.get(f"{CLAIMS}/second")).body["status"] == {"phase": "Pending"}
    assert (await api.get(f"{PVS}/pv-a")).body["spec"]["claimRef"]["name"] == "first"


async def test_bound_claim_whose_volume_is_deleted_is_lost(api: Api):
    await create(api, PVS, volume("pv-a"))
    await create(api, CLAIMS, claim("c"))
    await wait_until(api, CLAIMS, "c", _phase("Bound"))
    assert (await api.delete(f"{PVS}/pv-a")).status == 200
    await wait_until(api, CLAIMS, "c", _phase("Lost"))
    event = await wait_for_event(api, "c", "ClaimLost")
    assert event["message"] == (
        "Bound claim has lost its PersistentVolume. Data on the volume is lost!"
    )


async def test_waiting_immediate_claim_binds_when_a_volume_appears(api: Api):
    await create(api, CLAIMS, claim("c", "2Gi", storage_class=""))
    await wait_for_event(api, "c", "FailedBinding")
    await create(api, PVS, volume("pv-small", "1Gi"))  # too small: 1Gi < 2Gi
    await create(api, PVS, volume("pv-late", "2Gi"))
    bound = await wait_until(api, CLAIMS, "c", _phase("Bound"))
    assert bound["spec"]["volumeName"] == "pv-late"


@pytest.mark.parametrize(
    ("storage_class_name", "provisioner", "message"),
    [
        pytest.param(
            "local",
            "kubernetes.io/no-provisioner",
            "no volume plugin matched name: kubernetes.io/no-provisioner",
            id="in-tree provisioner name",
        ),
        pytest.param(
            "nowhere", None, 'storageclass.storage.k8s.io "nowhere" not found', id="missing class"
        ),
    ],
)
async def test_immediate_claim_that_cannot_be_provisioned(
    api: Api, storage_class_name, provisioner, message
):
    # what kube-controller-manager records for the same objects (observed on v1.20; v1.37's
    # source words them the same)
    if provisioner is not None:
        await create(api, CLASSES, storage_class(storage_class_name, provisioner))
    await create(api, CLAIMS, claim("c", storage_class=storage_class_name))
    event = await wait_for_event(api, "c", "ProvisioningFailed")
    assert (event["type"], event["message"]) == ("Warning", message)
    pending = (await api.get(f"{CLAIMS}/c")).body
    assert pending["status"] == {"phase": "Pending"}
    assert pending["metadata"]["annotations"] == {}  # no storage-provisioner annotation


@pytest.mark.parametrize(
    ("pv_body", "claim_body", "why"),
    [
        pytest.param(
            volume("pv-x", "1Gi"), claim("c", "2Gi"), "requested PV is too small", id="too small"
        ),
        pytest.param(
            volume("pv-x", storage_class="gold"),
            claim("c", storage_class=""),
            "storageClassName does not match",
            id="class",
        ),
        pytest.param(
            volume("pv-x", volumeMode="Block"), claim("c"), "incompatible volumeMode", id="mode"
        ),
        pytest.param(
            volume("pv-x", modes=("ReadOnlyMany",)),
            claim("c"),
            "incompatible accessMode",
            id="access mode",
        ),
    ],
)
async def test_pre_bound_claim_to_an_unsuitable_volume(api: Api, pv_body, claim_body, why):
    # the messages kube-controller-manager records for the same objects (observed on v1.20;
    # v1.37's source words them the same)
    await create(api, PVS, pv_body)
    await create(api, CLAIMS, {**claim_body, "spec": {**claim_body["spec"], "volumeName": "pv-x"}})
    event = await wait_for_event(api, "c", "VolumeMismatch")
    assert (event["type"], event["message"]) == (
        "Warning",
        f'Cannot bind to requested volume "pv-x": {why}',
    )
    assert (await api.get(f"{CLAIMS}/c")).body["status"] == {"phase": "Pending"}
    assert "claimRef" not in (await api.get(f"{PVS}/pv-x")).body["spec"]


@pytest.mark.parametrize(
    ("source", "failure"),
    [
        pytest.param(
            {"hostPath": {"path": "/data/x"}},
            "host_path deleter only supports /tmp/.+ but received provided /data/x",
            id="hostPath outside /tmp",
        ),
        pytest.param(
            {"hostPath": None, "csi": {"driver": "x.y", "volumeHandle": "h"}},
            'error getting deleter volume plugin for volume "pv-a": no deletable volume plugin '
            "matched",
            id="no deleter",
        ),
        pytest.param({"hostPath": {"path": "/tmp/x"}}, None, id="hostPath under /tmp is deleted"),
    ],
)
async def test_deleted_claim_with_reclaim_policy_delete(api: Api, source, failure):
    # what kube-controller-manager does with the same objects (observed on v1.20; v1.37's
    # source does the same, its deleter error lower-cased)
    body = volume("pv-a", persistentVolumeReclaimPolicy="Delete")
    body["spec"] = {k: v for k, v in {**body["spec"], **source}.items() if v is not None}
    await create(api, PVS, body)
    await create(api, CLAIMS, claim("c"))
    await wait_until(api, PVS, "pv-a", _phase("Bound"))
    since = (await api.get(PVS)).body["metadata"]["resourceVersion"]
    assert (await api.delete(f"{CLAIMS}/c")).status == 200
    if failure is None:
        await api.watch(
            f"{PVS}?watch=1&resourceVersion={since}",
            until=lambda seen: seen[-1]["type"] == "DELETED",
        )
        return
    failed = await wait_until(api, PVS, "pv-a", _phase("Failed"))
    assert failed["status"]["message"] == failure
    reply = await api.get(
        "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=pv-a"
    )
    assert [(e["type"], e["reason"], e["message"]) for e in reply.body["items"]] == [
        ("Warning", "VolumeFailedDelete", failure)
    ]


async def test_one_broken_object_does_not_stop_the_others(api: Api, caplog):
    # a claim without a request cannot come through the API; stored behind its back (as a
    # bug could), its sync fails, and the claims after it in the same round still bind
    await create(api, PVS, volume("pv-a"))
    await wait_until(api, PVS, "pv-a", _phase("Available"))
    broken = {
        "metadata": {"name": "a-broken", "namespace": "default", "uid": "u-1"},
        "spec": {"accessModes": ["ReadWriteOnce"]},
        "status": {"phase": "Pending"},
    }
    api.server.registry.write("persistentvolumeclaims", broken)
    await create(api, CLAIMS, claim("b-good"))
    bound = await wait_until(api, CLAIMS, "b-good", _phase("Bound"))
    assert bound["spec"]["volumeName"] == "pv-a"
    assert "failed to sync PersistentVolumeClaim default/a-broken" in caplog.text
