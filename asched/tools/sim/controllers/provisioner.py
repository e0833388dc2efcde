"""The hollow provisioner: what a CSI driver's external-provisioner does, for hollow drivers.

A *hollow driver* is any provisioner name ending in ``.hollow.asched.io`` (for example
``local.hollow.asched.io``): a StorageClass naming one gets its claims provisioned inside the
simulator, with no driver running. The PV controller (:mod:`asched.tools.sim.controllers.volume_controller`)
calls :meth:`Provisioner.provision` for an unbound claim of such a class once binding is no
longer delayed (Immediate, or WaitForFirstConsumer with the scheduler's
``volume.kubernetes.io/selected-node`` annotation). Provisioning then:

1. with a selected node: looks the Node up (missing: fails, see below);
2. when the driver's CSIDriver has ``spec.storageCapacity: true``: takes the first
   CSIStorageCapacity (any namespace, name order) of the claim's class whose ``nodeTopology``
   selects the node's labels (any, without a node) and whose ``capacity`` (and
   ``maximumVolumeSize``, if set) holds the request, and lowers its ``capacity`` by the request;
   none: fails;
3. creates the PV ``pvc-<claim uid>``: capacity = the request, the claim's access modes and
   volume mode, the class's reclaim policy, ``csi`` source of the driver, ``claimRef`` to the
   claim, annotation ``pv.kubernetes.io/provisioned-by``, and with a node, node affinity
   ``kubernetes.io/hostname In [<the node's hostname label, else its name>]``; the PV
   controller then binds the claim to it. Events ``Provisioning``, then ``ProvisioningSucceeded``
   (the external-provisioner's reasons and messages).

A failure is what the external-provisioner does on ``ResourceExhausted`` with a selected node:
the annotation is removed from the claim (the scheduler retries the pod) and a Warning Event
``ProvisioningFailed`` is recorded on the claim. When a provisioned PV is deleted (the PV
controller deletes Released ones whose policy is Delete), the capacity it took is given back.

Not simulated: ``allowedTopologies`` (the scheduler checks them, the provisioner trusts it),
CSI topology keys other than the hostname, volume expansion, snapshots and data sources.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors, quantity, selectors
from asched.tools.sim.apiserver.registry import Registry
from asched.tools.sim.apiserver.resources import BY_GVR
from asched.tools.sim.apiserver.store import Entry, Event
from asched.tools.sim.controllers import recorder, volume_match

JSON = dict[str, Any]

HOLLOW_SUFFIX: Final = ".hollow.asched.io"
SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
PROVISIONED_BY: Final = "pv.kubernetes.io/provisioned-by"
#: on a provisioned PV: the CSIStorageCapacity (``namespace/name``) its size was taken from.
CAPACITY_FROM: Final = "hollow.asched.io/capacity-from"
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
COMPONENT: Final = "hollow-provisioner"

_VOLUMES: Final = BY_GVR[("", "v1", "persistentvolumes")]


def is_hollow(provisioner: str) -> bool:
    """Whether the simulator provisions for ``provisioner`` itself."""
    return provisioner.endswith(HOLLOW_SUFFIX)


def _fits(capacity: JSON, request: str) -> bool:
    available = capacity.get("capacity")
    if available is None or quantity.compare(available, request) < 0:
        return False
    largest = capacity.get("maximumVolumeSize")
    return largest is None or quantity.compare(largest, request) >= 0


def _amount(total: Fraction, like: str) -> str:
    """``total`` (rounded down to a whole byte) in ``like``'s format, as Go's Quantity.Add keeps
    the left operand's format: ``6Gi``, not ``6442450944``."""
    whole = total.numerator // total.denominator
    if quantity.parse(like)[1] == "BinarySI" and whole and whole % 1024 == 0:
        return quantity.canonical_text(f"{whole // 1024}Ki")
    return quantity.canonical_text(str(whole))


def _minus(left: str, right: str) -> str:
    return _amount(quantity.parse(left)[0] - quantity.parse(right)[0], left)


def _plus(left: str, right: str) -> str:
    return _amount(quantity.parse(left)[0] + quantity.parse(right)[0], left)


class Provisioner:
    """Provisions claims of hollow drivers (see the module docstring)."""

    def __init__(self, registry: Registry, events: recorder.Once) -> None:
        self._registry = registry
        self._tables = registry.store.tables
        self._events = events
        #: (class, hostname) -> keys of the capacities whose topology is exactly that host
        self._by_host: dict[tuple[str, str], set[str]] = {}
        #: class -> keys of the other capacities of that class
        self._general: dict[str, set[str]] = {}

    def index(self, event: Event) -> None:
        """Keep the capacity index current (called inside the store's notification)."""
        if event.prev is not None:
            self._bucket(event.prev.obj).discard(event.prev.key)
        if event.type != "DELETED":
            self._bucket(event.entry.obj).add(event.entry.key)

    def _bucket(self, capacity: JSON) -> set[str]:
        class_name = str(capacity.get("storageClassName", ""))
        topology = capacity.get("nodeTopology") or {}
        match = topology.get("matchLabels") or {}
        if set(topology) == {"matchLabels"} and set(match) == {HOSTNAME_LABEL}:
            return self._by_host.setdefault((class_name, str(match[HOSTNAME_LABEL])), set())
        return self._general.setdefault(class_name, set())

    def provision(self, claim: JSON, storage_class: JSON) -> None:
        """Create the claim's PV, or fail and ask the scheduler to retry."""
        meta = claim["metadata"]
        name = f"pvc-{meta['uid']}"
        if name in self._tables["persistentvolumes"].objects:
            return  # already provisioned; the PV controller binds it
        driver = str(storage_class["provisioner"])
        class_name = storage_class["metadata"]["name"]
        request = volume_match.requested_storage(claim)
        node_name = (meta.get("annotations") or {}).get(SELECTED_NODE)
        labels: dict[str, str] | None = None
        if node_name:
            node = self._tables["nodes"].objects.get(node_name)
            if node is None:
                self._fail(
                    claim, class_name, f'failed to get target node: node "{node_name}" not found'
                )
                return
            labels = node.obj["metadata"].get("labels") or {}
        source: Entry | None = None
        if self._tracks_capacity(driver):
            source = self._capacity_for(class_name, labels, request)
            if source is None:
                where = f" on node {node_name}" if node_name else ""
                self._fail(
                    claim,
                    class_name,
                    f"rpc error: code = ResourceExhausted desc = no capacity for {request}{where}",
                )
                return
        recorder.record(
            self._registry,
            claim,
            "PersistentVolumeClaim",
            "Normal",
            "Provisioning",
            "External provisioner is provisioning volume for claim "
            f'"{meta.get("namespace", "")}/{meta["name"]}"',
            COMPONENT,
        )
        volume = self._volume(name, claim, storage_class, request, labels, node_name, source)
        try:
            self._registry.create(_VOLUMES, "", volume)
        except apierrors.StatusError as exc:
            self._fail(claim, class_name, str(exc))
            return
        if source is not None:
            taken = {**source.obj, "capacity": _minus(source.obj["capacity"], request)}
            self._registry.write("csistoragecapacities", taken)
        recorder.record(
            self._registry,
            claim,
            "PersistentVolumeClaim",
            "Normal",
            "ProvisioningSucceeded",
            f"Successfully provisioned volume {name}",
            COMPONENT,
        )

    def released(self, volume: JSON) -> None:
        """Give a deleted provisioned PV's size back to the capacity it came from."""
        key = (volume["metadata"].get("annotations") or {}).get(CAPACITY_FROM)
        source = self._tables["csistoragecapacities"].objects.get(key or "")
        size = (volume["spec"].get("capacity") or {}).get("storage")
        if source is None or size is None or source.obj.get("capacity") is None:
            return
        self._registry.write(
            "csistoragecapacities", {**source.obj, "capacity": _plus(source.obj["capacity"], size)}
        )

    def _tracks_capacity(self, driver: str) -> bool:
        entry = self._tables["csidrivers"].objects.get(driver)
        return entry is not None and bool((entry.obj.get("spec") or {}).get("storageCapacity"))

    def _capacity_for(
        self, class_name: str, labels: dict[str, str] | None, request: str
    ) -> Entry | None:
        objects = self._tables["csistoragecapacities"].objects
        keys = set(self._general.get(class_name, ()))
        if labels is None:  # no node: any capacity of the class
            for (name, _), bucket in self._by_host.items():
                if name == class_name:
                    keys |= bucket
        elif HOSTNAME_LABEL in labels:
            keys |= self._by_host.get((class_name, labels[HOSTNAME_LABEL]), set())
        for key in sorted(keys):
            entry = objects.get(key)
            if entry is None or not _fits(entry.obj, request):
                continue
            topology = entry.obj.get("nodeTopology")
            if labels is None or selectors.structured_matches(topology, labels):
                return entry
        return None

    def _volume(
        self,
        name: str,
        claim: JSON,
        storage_class: JSON,
        request: str,
        labels: dict[str, str] | None,
        node_name: str | None,
        source: Entry | None,
    ) -> JSON:
        driver = str(storage_class["provisioner"])
        annotations = {PROVISIONED_BY: driver}
        if source is not None:
            annotations[CAPACITY_FROM] = source.key
        spec: JSON = {
            "capacity": {"storage": request},
            "accessModes": list(claim["spec"].get("accessModes") or []),
            "claimRef": volume_match.claim_ref(claim),
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy", "Delete"),
            "storageClassName": storage_class["metadata"]["name"],
            "volumeMode": claim["spec"].get("volumeMode", "Filesystem"),
            "csi": {"driver": driver, "volumeHandle": name},
        }
        if labels is not None and node_name:
            hostname = labels.get(HOSTNAME_LABEL, node_name)
            term = {"key": HOSTNAME_LABEL, "operator": "In", "values": [hostname]}
            spec["nodeAffinity"] = {
                "required": {"nodeSelectorTerms": [{"matchExpressions": [term]}]}
            }
        return {"metadata": {"name": name, "annotations": annotations}, "spec": spec}

    def _fail(self, claim: JSON, class_name: str, why: str) -> None:
        """The external-provisioner's reschedule: drop the selected node, record the failure."""
        meta = claim["metadata"]
        annotations = dict(meta.get("annotations") or {})
        if annotations.pop(SELECTED_NODE, None) is not None:
            current = self._tables["persistentvolumeclaims"].objects.get(
                f"{meta.get('namespace', '')}/{meta['name']}"
            )
            if current is not None and current.obj["metadata"].get("uid") == meta.get("uid"):
                cleared = {**current.obj, "metadata": {**current.obj["metadata"]}}
                cleared["metadata"]["annotations"] = {
                    key: value
                    for key, value in (current.obj["metadata"].get("annotations") or {}).items()
                    if key != SELECTED_NODE
                }
                claim = self._registry.write("persistentvolumeclaims", cleared).obj
        elif not self._events.first(claim, "ProvisioningFailed"):
            return  # no node to give back: retried on every change, recorded once
        recorder.record(
            self._registry,
            claim,
            "PersistentVolumeClaim",
            "Warning",
            "ProvisioningFailed",
            f'failed to provision volume with StorageClass "{class_name}": {why}',
            COMPONENT,
        )
