"""Which attachable CSI volumes a pod uses: upstream NodeVolumeLimits' counting rules.

A volume counts under a CSI driver, with a unique name ``<driver>/<handle>`` (the same
volume used by several pods on a node is attached once):

* a claim (``persistentVolumeClaim``, or a generic ephemeral volume's ``<pod>-<volume>``
  claim) bound to a CSI PV: the PV's driver and volume handle;
* a claim bound to an in-tree PV whose plugin is migrated to CSI on the node: the CSI
  driver of the plugin (:data:`MIGRATED_DRIVERS`) and the translated handle;
* a claim not bound yet, or bound to a PV that does not exist: its StorageClass's
  provisioner (translated when it is a migrated in-tree one), with a handle unique to
  the claim; not counted when the claim has no class or the class does not exist;
* an inline GCE PD, AWS EBS, Azure Disk or Cinder volume whose plugin is migrated on the
  node: the translated driver and handle.

Migration (upstream v1.33 ``isCSIMigrationOn``): the four plugins above count as
migrated on every node that has a CSINode, whatever its ``migrated-plugins``
annotation says (their migration is GA and locked on); any other in-tree plugin is
not counted. Both implementations (the columns of :mod:`asched.cluster.attachments`
and the reference plugin) use :func:`attachable_volumes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from asched.cluster.records import PodInfo
from asched.cluster.volumes import PersistentVolume, PersistentVolumeClaim, VolumeCatalog

#: in-tree plugin name -> the CSI driver it is migrated to (csi-translation-lib)
MIGRATED_DRIVERS: Final[Mapping[str, str]] = {
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
}
#: in-tree plugins csi-translation-lib can translate but v1.33 does not count as migrated
#: in NodeVolumeLimits (their volumes are not counted)
UNCOUNTED_MIGRATABLE: Final = frozenset(
    {"kubernetes.io/azure-file", "kubernetes.io/vsphere-volume", "kubernetes.io/portworx-volume"}
)
#: a pod volume kind -> its in-tree plugin name
INLINE_PLUGINS: Final[Mapping[str, str]] = {
    "aws-ebs": "kubernetes.io/aws-ebs",
    "gce-pd": "kubernetes.io/gce-pd",
    "azure-disk": "kubernetes.io/azure-disk",
    "cinder": "kubernetes.io/cinder",
}
#: the prefix of the handle of a volume not provisioned yet (upstream: a random prefix)
UNBOUND_PREFIX: Final = "\x00unbound-"

_ZONE_KEYS: Final = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
_REGION_KEYS: Final = (
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/region",
)


class VolumeLookupError(Exception):
    """The pod being scheduled uses a claim that cannot be resolved.

    ``unresolvable`` True: the claim does not exist (the pod is
    UnschedulableAndUnresolvable with this message); False: an error status.
    """

    def __init__(self, message: str, *, unresolvable: bool) -> None:
        super().__init__(message)
        self.message = message
        self.unresolvable = unresolvable


@dataclass(frozen=True, slots=True)
class Attachable:
    """One attachable volume: its unique name and the CSI driver it counts under."""

    unique: str
    driver: str


def translated_handle(plugin: str, handle: str, labels: Mapping[str, str]) -> str:
    """The CSI volume handle csi-translation-lib gives an in-tree volume ``handle``.

    AWS EBS drops an ``aws://<zone>/`` prefix; GCE PD becomes
    ``projects/UNSPECIFIED/zones/<zone>/disks/<pd>`` (the PV's zone label when it has one
    zone, ``regions/<region>`` when several, ``UNSPECIFIED`` inline); the others keep it.
    """
    if plugin == "kubernetes.io/aws-ebs" and handle.startswith("aws://"):
        return handle.removeprefix("aws://").strip("/").rsplit("/", 1)[-1]
    if plugin == "kubernetes.io/gce-pd":
        zone = next((labels[k] for k in _ZONE_KEYS if k in labels), "")
        if "__" in zone:
            region = next((labels[k] for k in _REGION_KEYS if k in labels), "UNSPECIFIED")
            return f"projects/UNSPECIFIED/regions/{region}/disks/{handle}"
        return f"projects/UNSPECIFIED/zones/{zone or 'UNSPECIFIED'}/disks/{handle}"
    return handle


def _from_pv(pv: PersistentVolume, *, migrated: bool) -> Attachable | None:
    if pv.csi_driver:
        if not pv.volume_handle:
            return None
        return Attachable(f"{pv.csi_driver}/{pv.volume_handle}", pv.csi_driver)
    driver = MIGRATED_DRIVERS.get(pv.in_tree_plugin)
    if driver is None or not migrated or not pv.in_tree_handle:
        return None
    handle = translated_handle(pv.in_tree_plugin, pv.in_tree_handle, pv.labels)
    return Attachable(f"{driver}/{handle}", driver)


def _from_class(
    claim: PersistentVolumeClaim, catalog: VolumeCatalog, *, migrated: bool
) -> Attachable | None:
    class_name = claim.storage_class or ""
    storage_class = catalog.classes.get(class_name) if class_name else None
    if storage_class is None:
        return None
    handle = f"{UNBOUND_PREFIX}{claim.namespace}/{claim.name}"
    provisioner = storage_class.provisioner
    if provisioner in UNCOUNTED_MIGRATABLE:
        return None
    if provisioner in MIGRATED_DRIVERS:
        if not migrated:
            return None
        provisioner = MIGRATED_DRIVERS[provisioner]
    if not provisioner:
        return None
    return Attachable(f"{provisioner}/{handle}", provisioner)


def claim_attachable(
    claim: PersistentVolumeClaim, catalog: VolumeCatalog, *, migrated: bool
) -> Attachable | None:
    """What a claim attaches (None: nothing counted); ``migrated``: the node has a CSINode."""
    pv = catalog.pvs.get(claim.volume_name) if claim.volume_name else None
    if pv is None:
        return _from_class(claim, catalog, migrated=migrated)
    return _from_pv(pv, migrated=migrated)


def attachable_volumes(
    pod: PodInfo, catalog: VolumeCatalog, *, migrated: bool, new_pod: bool
) -> dict[str, str]:
    """The pod's attachable volumes: unique name -> CSI driver.

    ``migrated``: whether the node has a CSINode (in-tree volumes count only then).
    ``new_pod``: the pod being scheduled; its missing claims raise
    :class:`VolumeLookupError` (upstream's Filter status), where an existing pod's are
    not counted.
    """
    found: dict[str, str] = {}
    for volume in pod.volumes:
        if volume.kind in ("claim", "ephemeral"):
            if not volume.claim:
                if new_pod:
                    raise VolumeLookupError("PersistentVolumeClaim had no name", unresolvable=False)
                continue
            claim = catalog.claims.get(f"{pod.namespace}/{volume.claim}")
            if claim is None:
                if new_pod:
                    raise VolumeLookupError(
                        f"looking up PVC {pod.namespace}/{volume.claim}: "
                        f'persistentvolumeclaim "{volume.claim}" not found',
                        unresolvable=True,
                    )
                continue
            if volume.kind == "ephemeral" and (not pod.uid or pod.uid not in claim.owners):
                if new_pod:
                    raise VolumeLookupError(
                        f"PVC {claim.key} was not created for pod {pod.key} (pod is not owner)",
                        unresolvable=False,
                    )
                continue
            item = claim_attachable(claim, catalog, migrated=migrated)
        else:
            plugin = INLINE_PLUGINS.get(volume.kind)
            if plugin is None or not migrated:
                continue
            driver = MIGRATED_DRIVERS[plugin]
            handle = translated_handle(plugin, volume.handle, {})
            item = Attachable(f"{driver}/{handle}", driver)
        if item is not None:
            found[item.unique] = item.driver
    return found


def needs_count(pod: PodInfo) -> bool:
    """Whether NodeVolumeLimits' Filter runs for the pod (claims, ephemeral or inline
    migratable volumes); upstream's PreFilter skips it otherwise."""
    return any(v.kind in ("claim", "ephemeral") or v.kind in INLINE_PLUGINS for v in pod.volumes)
