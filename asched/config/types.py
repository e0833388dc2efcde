"""The typed, validated KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``).

Everything here is frozen and already validated by :mod:`asched.config.load`; code that
receives a :class:`SchedulerConfig` trusts it. Field names are snake_case versions of
upstream's; units are in the names (``_seconds``) or docstrings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from asched.cluster.records import NodeAffinity

ScoringType = Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]


@dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin named in a PluginSet; ``weight`` 0 means unset (scores treat it as 1)."""

    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class PluginSet:
    """``{enabled: [...], disabled: [...]}`` at one extension point, as the user wrote it."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


#: Extension points in upstream's Plugins struct order (camelCase as in YAML).
EXTENSION_POINTS: tuple[str, ...] = (
    "multiPoint",
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)


@dataclass(frozen=True, slots=True)
class ResolvedPlugins:
    """The plugins a profile runs at each extension point, in order, after merging defaults.

    ``score`` pairs each score plugin with its effective weight (>= 1).
    """

    pre_enqueue: tuple[str, ...] = ()
    queue_sort: tuple[str, ...] = ()
    pre_filter: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()
    post_filter: tuple[str, ...] = ()
    pre_score: tuple[str, ...] = ()
    score: tuple[tuple[str, int], ...] = ()
    reserve: tuple[str, ...] = ()
    permit: tuple[str, ...] = ()
    pre_bind: tuple[str, ...] = ()
    bind: tuple[str, ...] = ()
    post_bind: tuple[str, ...] = ()

    def all_names(self) -> tuple[str, ...]:
        """Every plugin used anywhere in the profile, first appearance order."""
        seen: dict[str, None] = {}
        for point in (
            self.pre_enqueue,
            self.queue_sort,
            self.pre_filter,
            self.filter,
            self.post_filter,
            self.pre_score,
            tuple(name for name, _ in self.score),
            self.reserve,
            self.permit,
            self.pre_bind,
            self.bind,
            self.post_bind,
        ):
            for name in point:
                seen.setdefault(name, None)
        return tuple(seen)


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource and its weight in a scoring formula."""

    name: str
    weight: int = 1


@dataclass(frozen=True, slots=True)
class ShapePoint:
    """A RequestedToCapacityRatio shape point: utilization 0..100 -> score 0..10."""

    utilization: int
    score: int


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """NodeResourcesFit's scoring strategy."""

    type: ScoringType = "LeastAllocated"
    resources: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    shape: tuple[ShapePoint, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    defaulting_type: Literal["System", "List"] = "System"
    default_constraints: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    """scheduler-plugins' Coscheduling args (``apis/config/types.go``), its defaults."""

    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0
    pod_group_reject_percentage: int = 10


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600


@dataclass(frozen=True, slots=True)
class Profile:
    """One scheduling profile.

    ``plugins`` is what the user wrote (per extension point); ``resolved`` is what runs.
    ``plugin_args`` maps a plugin name to its (defaulted) args for every enabled plugin
    that has an args kind.
    """

    scheduler_name: str = "default-scheduler"
    percentage_of_nodes_to_score: int | None = None
    plugins: Mapping[str, PluginSet] = field(default_factory=dict)
    resolved: ResolvedPlugins = field(default_factory=ResolvedPlugins)
    plugin_args: Mapping[str, object] = field(default_factory=dict)

    def args(self, plugin: str) -> object | None:
        return self.plugin_args.get(plugin)


@dataclass(frozen=True, slots=True)
class LeaderElection:
    """Lease-based leader election; durations in seconds."""

    leader_elect: bool = True
    lease_duration_seconds: float = 15.0
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True, slots=True)
class ClientConnection:
    """How to reach the API server. ``qps``/``burst`` are accepted and documented."""

    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100


#: upstream's DefaultExtenderTimeout: an extender call with no ``httpTimeout`` set
DEFAULT_EXTENDER_TIMEOUT_SECONDS: Final = 5.0


@dataclass(frozen=True, slots=True)
class ExtenderTLSConfig:
    """An extender's ``tlsConfig``; ``*_data`` are PEM bytes (base64 in the document).

    ``*_data`` take precedence over the matching ``*_file`` (paths), as in client-go.
    """

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True, slots=True)
class ManagedResource:
    """An extended resource an extender manages (``managedResources[]``)."""

    name: str
    #: NodeResourcesFit ignores the resource (upstream's ignoredByScheduler).
    ignored_by_scheduler: bool = False


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    """One entry of ``extenders`` (upstream's ``Extender``); an empty verb means "not offered".

    ``http_timeout_seconds`` is the whole-call deadline in seconds (upstream's default,
    5 s, when ``httpTimeout`` is unset or zero).
    """

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout_seconds: float = DEFAULT_EXTENDER_TIMEOUT_SECONDS
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """The whole configuration; ``parallelism`` is accepted but unused (see docs)."""

    profiles: tuple[Profile, ...]
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    #: Start the informers only once this replica leads (upstream delayCacheUntilActive).
    delay_cache_until_active: bool = False
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    #: Scheduler extenders as written (``build_extenders`` in asched.extenders.extender
    #: puts the ignorable ones last, the order upstream calls them in).
    extenders: tuple[ExtenderConfig, ...] = ()

    def profile(self, scheduler_name: str) -> Profile | None:
        """The profile with this schedulerName, or None."""
        for profile in self.profiles:
            if profile.scheduler_name == scheduler_name:
                return profile
        return None
