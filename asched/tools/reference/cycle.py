"""Per-node accounting and the per-pod context the reference plugins read.

A :class:`NodeState` is upstream's ``NodeInfo`` reduced to what the default plugins use:
the node record, the pods bound to it, ``Requested`` (sum of the pods' effective
requests), ``NonZeroRequested`` cpu/memory, the host ports in use, and the image sizes by
name. A :class:`Cycle` holds everything that is the same for every node while one pod is
evaluated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from asched.cluster.records import HostPort, NodeInfo, PodInfo
from asched.cluster.snapshot import Snapshot
from asched.cluster.volumes import VolumeCatalog
from asched.config.types import Profile
from asched.tools.reference.crosspod import namespace_labels

ArgsT = TypeVar("ArgsT")


@dataclass(frozen=True, slots=True)
class NodeState:
    """One node and what its bound pods use. Quantities in canonical units."""

    info: NodeInfo
    pods: tuple[PodInfo, ...]
    requested: Mapping[str, int]
    nonzero_cpu: int
    nonzero_memory: int
    used_ports: tuple[HostPort, ...]
    image_sizes: Mapping[str, int]

    @property
    def name(self) -> str:
        """The node's name."""
        return self.info.name

    def allocatable(self, resource: str) -> int:
        """Allocatable amount of ``resource`` (0 when the node does not report it)."""
        return self.info.allocatable.get(resource, 0)


def node_state(node: NodeInfo, pods: tuple[PodInfo, ...]) -> NodeState:
    """Account ``pods`` (all bound to ``node``) on ``node``."""
    requested: dict[str, int] = {}
    for pod in pods:
        for resource, amount in pod.requests.items():
            requested[resource] = requested.get(resource, 0) + amount
    image_sizes: dict[str, int] = {}
    for image in node.images:
        for name in image.names:
            image_sizes[name] = image.size  # a name listed twice: the last entry wins
    return NodeState(
        info=node,
        pods=pods,
        requested=requested,
        nonzero_cpu=sum(p.nonzero_cpu for p in pods),
        nonzero_memory=sum(p.nonzero_memory for p in pods),
        used_ports=tuple(port for p in pods for port in p.host_ports),
        image_sizes=image_sizes,
    )


def node_states(snapshot: Snapshot) -> list[NodeState]:
    """Every snapshot node, in snapshot order; pods bound to unknown nodes are ignored."""
    by_node: dict[str, list[PodInfo]] = {node.name: [] for node in snapshot.nodes}
    for pod in snapshot.pods:
        if pod.node_name in by_node:
            by_node[pod.node_name].append(pod)
    return [node_state(node, tuple(by_node[node.name])) for node in snapshot.nodes]


@dataclass(frozen=True, slots=True)
class Cycle:
    """One pod's evaluation: the pod, the profile and the whole cluster's node states.

    ``image_spread`` maps an image name to the number of snapshot nodes that list it
    (upstream's ``ImageStateSummary.NumNodes``).
    """

    pod: PodInfo
    profile: Profile
    nodes: tuple[NodeState, ...]
    image_spread: Mapping[str, int]
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: kind -> raw objects (``Snapshot.extras``: Services, controllers and sets, ...)
    extras: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    scratch: dict[str, Any] = field(default_factory=dict)  # per-evaluation plugin state
    #: PVs, claims, storage classes and CSI objects (``Snapshot.volumes``)
    volumes: VolumeCatalog = field(default_factory=VolumeCatalog)

    def args(self, plugin: str, kind: type[ArgsT]) -> ArgsT:
        """The profile's args for ``plugin``, or the defaults of ``kind`` when unset."""
        args = self.profile.plugin_args.get(plugin)
        return args if isinstance(args, kind) else kind()


def build_cycle(snapshot: Snapshot, pod: PodInfo, profile: Profile) -> Cycle:
    """Account the snapshot once for ``pod``."""
    nodes = tuple(node_states(snapshot))
    spread: dict[str, int] = {}
    for node in nodes:
        for name in node.image_sizes:
            spread[name] = spread.get(name, 0) + 1
    namespaces = namespace_labels(snapshot.extras.get("Namespace", ()))
    return Cycle(
        pod=pod,
        profile=profile,
        nodes=nodes,
        image_spread=spread,
        namespace_labels=namespaces,
        extras=snapshot.extras,
        volumes=snapshot.volumes,
    )
