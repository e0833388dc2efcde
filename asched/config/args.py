"""A profile's ``pluginConfig``: per-plugin args, read, defaulted and validated.

Each entry is ``{name, args}``. The name must be a plugin of the catalogue that takes args
(its :class:`~asched.config.catalogue.ArgsSpec`) and appear once per profile; ``args.kind``, when given, must be that
plugin's args kind and ``args.apiVersion``, when given, ``kubescheduler.config.k8s.io/v1``.
Every field of every args kind is checked here (the resource plugins' in
:mod:`asched.config.args_resources`), with upstream's defaults and ranges:

==================================  =============================================
InterPodAffinityArgs                hardPodAffinityWeight 0..100 (1)
DefaultPreemptionArgs               minCandidateNodesPercentage 0..100 (10),
                                    minCandidateNodesAbsolute >= 0 (100), not both 0
VolumeBindingArgs                   bindTimeoutSeconds >= 0 (600); ``shape`` is
                                    rejected, as upstream does while its
                                    StorageCapacityScoring feature is off
NodeAffinityArgs                    addedAffinity, decoded like a pod's nodeAffinity
PodTopologySpreadArgs               defaultingType System|List (System);
                                    defaultConstraints only with List
CoschedulingArgs (scheduler-plugins) permitWaitingTimeSeconds >= 0 (60),
                                    podGroupBackoffSeconds >= 0 (0),
                                    podGroupRejectPercentage 0..100 (10)
==================================  =============================================

PodTopologySpread's default constraints are kept as the validated objects the user wrote
(camelCase, as in a pod's ``topologySpreadConstraints``), so the plugin can read them with
the same code it uses for pods.

The defaults of a plugin nobody configured are what its reader returns for an empty
args object (:func:`default_args`), so the two can never drift apart. The same holds for
an installed plugin's args: its declaration gives the kind, the fields and the reader,
and the errors it reports carry the same paths
(``profiles[0].pluginConfig[2].args.priceLabel: ...``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from asched.cluster.decode_context import object_context
from asched.cluster.node_affinity_decode import decode_node_affinity
from asched.config.args_resources import (
    BALANCED_FIELDS,
    FIT_FIELDS,
    read_balanced_args,
    read_fit_args,
)
from asched.config.catalogue import ArgsSpec, Catalogue
from asched.config.schema import Problems, Section, is_qualified_name, quote
from asched.config.types import (
    CoschedulingArgs,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    PodTopologySpreadArgs,
    VolumeBindingArgs,
)
from asched.errors import DecodeError

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
#: Args kinds that may also name their own group's version (scheduler-plugins' args).
OTHER_API_VERSIONS: Final = {"CoschedulingArgs": "config.x-k8s.io/v1"}
PLUGIN_CONFIG_FIELDS: Final = frozenset({"name", "args"})
TYPE_META_FIELDS: Final = frozenset({"kind", "apiVersion"})
CONSTRAINT_FIELDS: Final = frozenset(
    {
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    }
)
WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
INCLUSION_POLICIES: Final = ("Honor", "Ignore")

#: The shape of a NodeAffinity, for the unknown-field check: object fields map to their
#: own schema, a list of objects to a one-element list, a scalar to None.
_TERM: Final[dict[str, Any]] = {
    "matchExpressions": [{"key": None, "operator": None, "values": None}],
    "matchFields": [{"key": None, "operator": None, "values": None}],
}
_NODE_AFFINITY: Final[dict[str, Any]] = {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_TERM]},
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": None, "preference": _TERM}],
}


def _check_fields(problems: Problems, raw: Any, path: str, schema: Any) -> None:
    """Report unknown fields in ``raw`` per ``schema``; wrong types are left to the decoder."""
    if isinstance(schema, dict) and isinstance(raw, Mapping):
        for key, value in raw.items():
            if key not in schema:
                problems.add(f"{path}.{key}", "unknown field")
            else:
                _check_fields(problems, value, f"{path}.{key}", schema[key])
    elif isinstance(schema, list) and isinstance(raw, list):
        for index, element in enumerate(raw):
            _check_fields(problems, element, f"{path}[{index}]", schema[0])


def _read_node_affinity(section: Section) -> NodeAffinityArgs:
    raw = section.get("addedAffinity")
    path = section.at("addedAffinity")
    _check_fields(section.problems, raw, path, _NODE_AFFINITY)
    try:
        ctx = object_context("NodeAffinityArgs", {})
        return NodeAffinityArgs(decode_node_affinity(ctx, raw, path))
    except DecodeError as exc:
        section.problems.add(exc.path, exc.message)
        return NodeAffinityArgs()


def _read_inter_pod_affinity(section: Section) -> InterPodAffinityArgs:
    weight = section.integer("hardPodAffinityWeight", 1)
    section.problems.check_range(section.at("hardPodAffinityWeight"), weight, 0, 100)
    ignore = section.boolean("ignorePreferredTermsOfExistingPods", default=False)
    return InterPodAffinityArgs(weight, ignore)


def _read_default_preemption(section: Section) -> DefaultPreemptionArgs:
    problems = section.problems
    percentage = section.integer("minCandidateNodesPercentage", 10)
    problems.check_range(section.at("minCandidateNodesPercentage"), percentage, 0, 100)
    absolute = section.integer("minCandidateNodesAbsolute", 100)
    if absolute < 0:
        problems.add(
            section.at("minCandidateNodesAbsolute"), f"must not be negative, got {absolute}"
        )
    if percentage == 0 and absolute == 0:
        problems.add(
            section.at("minCandidateNodesPercentage"),
            "must not be 0 while minCandidateNodesAbsolute is also 0",
        )
    return DefaultPreemptionArgs(percentage, absolute)


def _read_coscheduling(section: Section) -> CoschedulingArgs:
    problems = section.problems
    wait = section.integer("permitWaitingTimeSeconds", 60)
    backoff = section.integer("podGroupBackoffSeconds", 0)
    for key, value in (("permitWaitingTimeSeconds", wait), ("podGroupBackoffSeconds", backoff)):
        if value < 0:
            problems.add(section.at(key), f"must not be negative, got {value}")
    reject = section.integer("podGroupRejectPercentage", 10)
    problems.check_range(section.at("podGroupRejectPercentage"), reject, 0, 100)
    return CoschedulingArgs(wait, backoff, reject)


def _read_volume_binding(section: Section) -> VolumeBindingArgs:
    timeout = section.integer("bindTimeoutSeconds", 600)
    if timeout < 0:
        section.problems.add(
            section.at("bindTimeoutSeconds"), f"must not be negative, got {timeout}"
        )
    if section.has("shape"):
        section.problems.add(
            section.at("shape"),
            "not supported: asched does not score volume capacity "
            "(upstream rejects it too unless StorageCapacityScoring is on)",
        )
    return VolumeBindingArgs(timeout)


def _read_constraint(problems: Problems, raw: Any, path: str) -> dict[str, Any] | None:
    """One default topology spread constraint, or None when it has a problem (reported)."""
    before = problems.count()
    entry = Section(problems, raw, path, CONSTRAINT_FIELDS)
    max_skew = entry.optional_integer("maxSkew")
    if max_skew is None and not entry.has("maxSkew"):
        problems.add(entry.at("maxSkew"), "required")
    elif max_skew is not None and max_skew <= 0:
        problems.add(entry.at("maxSkew"), f"must be greater than 0, got {max_skew}")
    key = entry.string("topologyKey")
    if not key:
        problems.add(entry.at("topologyKey"), "required")
    elif not is_qualified_name(key):
        problems.add(entry.at("topologyKey"), f"must be a valid label key, got {key!r}")
    when = entry.string("whenUnsatisfiable")
    if when not in WHEN_UNSATISFIABLE:
        problems.add(
            entry.at("whenUnsatisfiable"),
            f"must be one of {', '.join(WHEN_UNSATISFIABLE)}, got {when!r}" if when else "required",
        )
    if entry.has("labelSelector"):
        problems.add(
            entry.at("labelSelector"),
            "must not be set: the selector is derived from each pod's owners",
        )
    min_domains = entry.optional_integer("minDomains")
    if min_domains is not None and min_domains <= 0:
        problems.add(entry.at("minDomains"), f"must be greater than 0, got {min_domains}")
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = entry.string(policy, "Honor")
        if value not in INCLUSION_POLICIES:
            problems.add(entry.at(policy), f"must be Honor or Ignore, got {value!r}")
    list(entry.strings("matchLabelKeys"))  # reports elements that are not strings
    return dict(entry.raw) if problems.count() == before else None


def _read_pod_topology_spread(section: Section) -> PodTopologySpreadArgs:
    problems = section.problems
    defaulting = section.string("defaultingType") or "System"
    constraints: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], str] = {}
    for path, raw in section.items("defaultConstraints"):
        constraint = _read_constraint(problems, raw, path)
        if constraint is None:
            continue
        pair = (constraint["topologyKey"], constraint["whenUnsatisfiable"])
        if pair in seen:
            problems.add(
                path,
                f"duplicate constraint for topologyKey {quote(pair[0])} and "
                f"whenUnsatisfiable {pair[1]} (first at {seen[pair]})",
            )
            continue
        seen[pair] = path
        constraints.append(constraint)
    if defaulting == "List":
        return PodTopologySpreadArgs("List", tuple(constraints))
    if defaulting != "System":
        problems.add(section.at("defaultingType"), f"must be System or List, got {defaulting!r}")
    elif isinstance(section.get("defaultConstraints"), list) and section.get("defaultConstraints"):
        problems.add(
            section.at("defaultingType"),
            "must be List when defaultConstraints are given (System uses built-in constraints)",
        )
    return PodTopologySpreadArgs("System")


#: The in-tree plugins' args (their declarations use these).
IN_TREE_ARGS: Final[dict[str, ArgsSpec]] = {
    "NodeResourcesFit": ArgsSpec("NodeResourcesFitArgs", FIT_FIELDS, read_fit_args),
    "NodeResourcesBalancedAllocation": ArgsSpec(
        "NodeResourcesBalancedAllocationArgs", BALANCED_FIELDS, read_balanced_args
    ),
    "NodeAffinity": ArgsSpec("NodeAffinityArgs", frozenset({"addedAffinity"}), _read_node_affinity),
    "InterPodAffinity": ArgsSpec(
        "InterPodAffinityArgs",
        frozenset({"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}),
        _read_inter_pod_affinity,
    ),
    "PodTopologySpread": ArgsSpec(
        "PodTopologySpreadArgs",
        frozenset({"defaultingType", "defaultConstraints"}),
        _read_pod_topology_spread,
    ),
    "DefaultPreemption": ArgsSpec(
        "DefaultPreemptionArgs",
        frozenset({"minCandidateNodesPercentage", "minCandidateNodesAbsolute"}),
        _read_default_preemption,
    ),
    "Coscheduling": ArgsSpec(
        "CoschedulingArgs",
        frozenset(
            {"permitWaitingTimeSeconds", "podGroupBackoffSeconds", "podGroupRejectPercentage"}
        ),
        _read_coscheduling,
    ),
    "VolumeBinding": ArgsSpec(
        "VolumeBindingArgs", frozenset({"bindTimeoutSeconds", "shape"}), _read_volume_binding
    ),
}


def default_args(spec: ArgsSpec) -> object:
    """The defaulted args: what ``spec``'s reader returns for an empty args object."""
    return spec.read(Section(Problems(), None, "", ()))


def _read_args(entry: Section, plugin: str, spec: ArgsSpec) -> object:
    section = entry.section("args", spec.fields | TYPE_META_FIELDS)
    kind = section.string("kind", spec.kind)
    if kind != spec.kind:
        section.report(
            "kind", f"must be {quote(spec.kind)} for plugin {quote(plugin)}, got {kind!r}"
        )
    api_version = section.string("apiVersion", API_VERSION)
    if api_version != API_VERSION and api_version != OTHER_API_VERSIONS.get(spec.kind):
        section.report("apiVersion", f"must be {quote(API_VERSION)}, got {api_version!r}")
    return spec.read(section)


def read_plugin_config(profile: Section, catalogue: Catalogue) -> dict[str, object]:
    """The args configured in ``profile.pluginConfig``, by plugin name (no defaults added)."""
    problems = profile.problems
    configured: dict[str, object] = {}
    first_at: dict[str, str] = {}
    for path, raw in profile.items("pluginConfig"):
        entry = Section(problems, raw, path, PLUGIN_CONFIG_FIELDS)
        name = entry.string("name")
        if not name:
            problems.add(entry.at("name"), "required")
        elif name not in catalogue:
            problems.add(entry.at("name"), catalogue.unknown(name))
        elif (spec := catalogue[name].args) is None:
            problems.add(entry.at("name"), f"plugin {quote(name)} takes no args")
        elif name in first_at:
            problems.add(
                entry.at("name"),
                f"duplicate config for plugin {quote(name)} (first at {first_at[name]})",
            )
        else:
            first_at[name] = path
            configured[name] = _read_args(entry, name, spec)
    return configured
