"""What the scheduler reads of storage: PersistentVolumes, claims, classes and CSI objects.

Records are decoded once from raw JSON (:mod:`asched.cluster.volume_decode`) with
quantities in bytes, and are immutable; :class:`VolumeCatalog` holds the current ones,
keyed as the API keys them. The catalog hangs off the node table (``table.volumes``)
and has the same single writer: watch events through the ingest path, and the
VolumeBinding plugin's Reserve/Unreserve (its assumed bindings, upstream's assume
cache). Plugins read it.

A pod's own volumes are :class:`PodVolume` records on
:attr:`~asched.cluster.records.PodInfo.volumes`, decoded with the pod.

Keys: a claim or a CSIStorageCapacity is ``namespace/name``; a PV, a StorageClass, a
CSINode (named after its node) and a CSIDriver are their names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

from asched.cluster.labelselector import LabelSelector
from asched.cluster.records import NodeAffinity, NodeSelectorTerm

READ_WRITE_ONCE: Final = "ReadWriteOnce"
READ_ONLY_MANY: Final = "ReadOnlyMany"
READ_WRITE_MANY: Final = "ReadWriteMany"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
ACCESS_MODES: Final = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)

FILESYSTEM: Final = "Filesystem"
BLOCK: Final = "Block"

IMMEDIATE: Final = "Immediate"
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"

#: the claim annotation the scheduler sets to ask for provisioning on a node
SELECTED_NODE_ANNOTATION: Final = "volume.kubernetes.io/selected-node"
#: the claim annotation the PV controller sets once it has bound the claim
BIND_COMPLETED_ANNOTATION: Final = "pv.kubernetes.io/bind-completed"
#: the claim annotations naming the provisioner that is to provision it
STORAGE_PROVISIONER_ANNOTATION: Final = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-provisioner"
#: the legacy storage-class annotation (wins over ``spec.storageClassName``)
BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
#: the StorageClass annotation marking the default class
DEFAULT_CLASS_ANNOTATION: Final = "storageclass.kubernetes.io/is-default-class"
#: the CSINode annotation listing the in-tree plugins migrated to CSI on that node
MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"


@dataclass(frozen=True, slots=True)
class ClaimRef:
    """A PV's ``spec.claimRef``: the claim it is (being) bound to; ``uid`` may be ""."""

    namespace: str
    name: str
    uid: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    """A PersistentVolume.

    ``capacity``: ``spec.capacity.storage`` in bytes. ``node_affinity``: the required
    terms of ``spec.nodeAffinity.required`` (None: any node). ``csi_driver`` and
    ``volume_handle``: ``spec.csi`` (""/"" when the PV is not CSI); ``in_tree_plugin``
    and ``in_tree_handle``: the in-tree source (e.g. ``kubernetes.io/gce-pd`` and its
    pdName) when the PV uses one, for CSI migration counting.
    """

    name: str
    uid: str = ""
    resource_version: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    storage_class: str = ""
    capacity: int = 0
    access_modes: tuple[str, ...] = ()
    volume_mode: str = FILESYSTEM
    node_affinity: NodeAffinity | None = None
    claim_ref: ClaimRef | None = None
    phase: str = ""
    deleting: bool = False
    csi_driver: str = ""
    volume_handle: str = ""
    in_tree_plugin: str = ""
    in_tree_handle: str = ""
    #: the raw object as last seen (PreBind writes a copy with ``spec.claimRef`` set)
    raw: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    """A PersistentVolumeClaim.

    ``storage_class``: the beta annotation, else ``spec.storageClassName``; None when
    neither is set (the API server's admission gives such claims the default class; an
    explicit ``""`` means "no class"). ``request``: ``spec.resources.requests.storage``
    in bytes. ``owners``: uids of the owner references with ``controller: true``.
    """

    namespace: str
    name: str
    uid: str = ""
    resource_version: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    storage_class: str | None = None
    volume_name: str = ""
    phase: str = ""
    access_modes: tuple[str, ...] = ()
    volume_mode: str = FILESYSTEM
    request: int = 0
    selector: LabelSelector | None = None
    owners: tuple[str, ...] = ()
    deleting: bool = False
    #: the raw object as last seen (PreBind writes a copy with the selected-node annotation)
    raw: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def selected_node(self) -> str:
        return self.annotations.get(SELECTED_NODE_ANNOTATION, "")


@dataclass(frozen=True, slots=True)
class StorageClass:
    """A StorageClass; ``allowed_topologies`` is empty when unrestricted."""

    name: str
    provisioner: str = ""
    binding_mode: str = IMMEDIATE
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class CSINode:
    """A CSINode: per driver, its attach limit (None: no limit given)."""

    name: str
    limits: Mapping[str, int | None] = field(default_factory=dict)
    #: in-tree plugin names (e.g. ``kubernetes.io/gce-pd``) migrated to CSI on this node
    migrated_plugins: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class CSIDriver:
    """A CSIDriver: whether the scheduler must consider CSIStorageCapacity for it."""

    name: str
    storage_capacity: bool = False
    attach_required: bool = True


@dataclass(frozen=True, slots=True)
class StorageCapacity:
    """A CSIStorageCapacity: what a class can still provision in a topology segment.

    ``node_topology`` None is the nil selector (matches no node). ``capacity`` and
    ``maximum_volume_size`` are bytes, None when unset.
    """

    namespace: str
    name: str
    storage_class: str
    node_topology: LabelSelector | None = None
    capacity: int | None = None
    maximum_volume_size: int | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


VolumeKind: TypeAlias = Literal[
    "claim",  # persistentVolumeClaim (``claim`` names it)
    "ephemeral",  # generic ephemeral: the claim ``<pod>-<volume>``
    "gce-pd",  # gcePersistentDisk: ``handle`` = pdName
    "aws-ebs",  # awsElasticBlockStore: ``handle`` = volumeID
    "rbd",  # rbd: ``handle`` = "pool/image", ``monitors`` set
    "iscsi",  # iscsi: ``handle`` = the iqn (what conflicts compare)
    "azure-disk",  # azureDisk: ``handle`` = diskURI
    "cinder",  # cinder: ``handle`` = volumeID
    "csi",  # inline CSI volume: ``driver`` set
    "other",  # anything the volume plugins do not look at
]


@dataclass(frozen=True, slots=True)
class PodVolume:
    """One entry of ``spec.volumes`` as the volume plugins see it."""

    name: str
    kind: VolumeKind
    claim: str = ""
    handle: str = ""
    read_only: bool = False
    driver: str = ""
    monitors: frozenset[str] = frozenset()


ChangeListener: TypeAlias = Callable[[str, str], None]
"""``(resource, key)``: called after the catalog applied a change (watch or assume)."""


def _newer(candidate: str, stored: str) -> bool:
    """Whether resourceVersion ``candidate`` is newer than ``stored`` (upstream's assume
    cache parses both as integers; one that does not parse counts as newer, so the
    watched object wins)."""
    try:
        return int(candidate) > int(stored)
    except ValueError:
        return True


class VolumeCatalog:
    """The current storage objects, keyed as the module docstring says.

    The ingest path calls ``put``/``remove``; VolumeBinding's Reserve and Unreserve
    assume and revert PV and claim bindings (they shadow the watched objects until the
    watch catches up). ``listeners`` hear every change, so the binding task can wait for
    a claim to be bound without polling.

    The assume cache (upstream's ``AssumeCache``): :meth:`assume_pv` and
    :meth:`assume_claim` replace the object the plugins see and keep the watched one
    aside; :meth:`restore_pv` and :meth:`restore_claim` put the watched one back. While
    an object is assumed, a watched version that is not newer than the assumed one
    (integer resourceVersions) is ignored, as upstream's informer handler ignores it; a
    newer one replaces both and ends the assumption. ``generation`` counts every change.
    """

    def __init__(self) -> None:
        self.pvs: dict[str, PersistentVolume] = {}
        self.claims: dict[str, PersistentVolumeClaim] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: dict[str, StorageCapacity] = {}
        self.listeners: list[ChangeListener] = []
        #: ``(resource, key)`` -> why that object did not decode (it is absent above)
        self.invalid: dict[tuple[str, str], str] = {}
        #: the watched object of each assumed PV / claim (the assumed one is in ``pvs``)
        self.pv_api: dict[str, PersistentVolume] = {}
        self.claim_api: dict[str, PersistentVolumeClaim] = {}
        self.generation = 0
        #: the PV index VolumeBinding keeps on this catalog (:mod:`asched.cluster.pv_index`)
        self.pv_index: object = None

    def _changed(self, resource: str, key: str) -> None:
        self.generation += 1
        for listener in self.listeners:
            listener(resource, key)

    def put_pv(self, pv: PersistentVolume) -> None:
        assumed = self.pvs.get(pv.name) if pv.name in self.pv_api else None
        if assumed is not None and not _newer(pv.resource_version, assumed.resource_version):
            return
        self.pv_api.pop(pv.name, None)
        self.pvs[pv.name] = pv
        self._changed("persistentvolumes", pv.name)

    def remove_pv(self, name: str) -> None:
        self.pv_api.pop(name, None)
        self.pvs.pop(name, None)
        self._changed("persistentvolumes", name)

    def put_claim(self, claim: PersistentVolumeClaim) -> None:
        key = claim.key
        assumed = self.claims.get(key) if key in self.claim_api else None
        if assumed is not None and not _newer(claim.resource_version, assumed.resource_version):
            return
        self.claim_api.pop(key, None)
        self.claims[key] = claim
        self._changed("persistentvolumeclaims", key)

    def remove_claim(self, key: str) -> None:
        self.claim_api.pop(key, None)
        self.claims.pop(key, None)
        self._changed("persistentvolumeclaims", key)

    def assume_pv(self, pv: PersistentVolume) -> None:
        """Shadow the watched PV with ``pv`` (Reserve's binding to a claim).

        Raises
        ------
        KeyError
            When the catalog holds no PV of that name.
        ValueError
            When ``pv`` is older than the stored one (upstream: "out of sync").
        """
        stored = self.pvs.get(pv.name)
        if stored is None:
            raise KeyError(f"PersistentVolume {pv.name!r} is not in the catalog")
        _check_in_sync("PersistentVolume", pv.name, pv.resource_version, stored.resource_version)
        self.pv_api.setdefault(pv.name, stored)
        self.pvs[pv.name] = pv
        self._changed("persistentvolumes", pv.name)

    def restore_pv(self, name: str) -> None:
        """End the assumption on PV ``name`` (no-op when there is none)."""
        api = self.pv_api.pop(name, None)
        if api is not None:
            self.pvs[name] = api
            self._changed("persistentvolumes", name)

    def api_pv(self, name: str) -> PersistentVolume | None:
        """The PV as the watch last showed it, whatever is assumed."""
        return self.pv_api.get(name) or self.pvs.get(name)

    def assume_claim(self, claim: PersistentVolumeClaim) -> None:
        """Shadow the watched claim with ``claim`` (Reserve's selected-node annotation).

        Raises
        ------
        KeyError
            When the catalog holds no claim of that key.
        ValueError
            When ``claim`` is older than the stored one.
        """
        key = claim.key
        stored = self.claims.get(key)
        if stored is None:
            raise KeyError(f"PersistentVolumeClaim {key!r} is not in the catalog")
        _check_in_sync(
            "PersistentVolumeClaim", key, claim.resource_version, stored.resource_version
        )
        self.claim_api.setdefault(key, stored)
        self.claims[key] = claim
        self._changed("persistentvolumeclaims", key)

    def restore_claim(self, key: str) -> None:
        """End the assumption on claim ``key`` (no-op when there is none)."""
        api = self.claim_api.pop(key, None)
        if api is not None:
            self.claims[key] = api
            self._changed("persistentvolumeclaims", key)

    def api_claim(self, key: str) -> PersistentVolumeClaim | None:
        """The claim as the watch last showed it, whatever is assumed."""
        return self.claim_api.get(key) or self.claims.get(key)

    def put_class(self, storage_class: StorageClass) -> None:
        self.classes[storage_class.name] = storage_class
        self._changed("storageclasses", storage_class.name)

    def remove_class(self, name: str) -> None:
        self.classes.pop(name, None)
        self._changed("storageclasses", name)

    def put_csi_node(self, csi_node: CSINode) -> None:
        self.csi_nodes[csi_node.name] = csi_node
        self._changed("csinodes", csi_node.name)

    def remove_csi_node(self, name: str) -> None:
        self.csi_nodes.pop(name, None)
        self._changed("csinodes", name)

    def put_csi_driver(self, driver: CSIDriver) -> None:
        self.csi_drivers[driver.name] = driver
        self._changed("csidrivers", driver.name)

    def remove_csi_driver(self, name: str) -> None:
        self.csi_drivers.pop(name, None)
        self._changed("csidrivers", name)

    def put_capacity(self, capacity: StorageCapacity) -> None:
        self.capacities[capacity.key] = capacity
        self._changed("csistoragecapacities", capacity.key)

    def remove_capacity(self, key: str) -> None:
        self.capacities.pop(key, None)
        self._changed("csistoragecapacities", key)


def _check_in_sync(kind: str, key: str, assumed: str, stored: str) -> None:
    try:
        older = int(assumed) < int(stored)
    except ValueError:
        older = False
    if older:
        raise ValueError(f"{kind} {key!r} is out of sync (stored: {stored}, assume: {assumed})")
