"""Differential test: the vectorised engine must agree exactly with the scalar reference.

Hypothesis builds small random clusters as raw JSON (nodes with random allocatable,
labels, taints, images; bound pods with random requests and host ports), a random
incoming pod (requests, init containers, tolerations, nodeSelector, required and
preferred node affinity with every operator, host ports, images, topology spread
constraints of both kinds), sometimes Services, ReplicaSets, StatefulSets and
ReplicationControllers selecting it (for the default spread constraints), and a random
profile (default plugins with random weights and args: scoring strategy, RTCR shape,
ignored resources, scheduler-enforced affinity, spread defaulting; sometimes a subset
of the filters). Both
implementations evaluate it; the whole :class:`Evaluation` must be equal: verdicts,
reasons, normalized scores, totals, top, the seeded choice and the message.

The run is derandomized so CI sees the same examples every time.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings, strategies as st

from asched.config.types import (
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    ShapePoint,
)
from asched.tools.reference import evaluate as reference_evaluate
from tests.builders import (
    MB,
    added_affinity,
    container,
    default_profile,
    make_node,
    make_pod,
    node_affinity,
    pdb_object,
    pod_info,
    profile_with,
    snapshot_of,
    toleration,
)

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
GPU = "example.com/gpu"
FPGA = "vendor.io/fpga"
HUGE = "hugepages-2Mi"
SCALARS = (GPU, FPGA, HUGE)
LABEL_VALUES: dict[str, tuple[str, ...]] = {
    ZONE: ("zone-a", "zone-b", "zone-c"),
    "disk": ("ssd", "hdd"),
    "gen": ("1", "2", "5", "10", "v2"),
    "team": ("a", "b"),
}
TAINT_KEYS = ("dedicated", "gpu", "spot")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NODE_IMAGES = ("img-a:latest", "img-b:v1", "reg:5000/img-c:latest", "img-d:latest", "img-d:v2")
POD_IMAGES = ("img-a", "img-b:v1", "reg:5000/img-c", "img-d", "img-d:v2", "img-e")
PORTS = (80, 8080)
HOST_IPS = ("", "0.0.0.0", "10.0.0.1", "10.0.0.2")

Raw = dict[str, Any]

cpus = st.one_of(
    st.sampled_from(["0", "100m", "250m", "500m", "1", "2", "3500m"]),
    st.integers(0, 4000).map(lambda m: f"{m}m"),
)
memories = st.one_of(
    st.sampled_from(["0", "64Mi", "128Mi", "512Mi", "1Gi", "2Gi"]),
    st.integers(0, 4 * 1024).map(lambda m: f"{m}Mi"),
)


@st.composite
def request_maps(draw: st.DrawFn) -> dict[str, str]:
    """One container's requests: any subset of cpu, memory, storage and scalars."""
    out: dict[str, str] = {}
    if draw(st.booleans()):
        out["cpu"] = draw(cpus)
    if draw(st.booleans()):
        out["memory"] = draw(memories)
    if draw(st.integers(0, 5)) == 0:
        out["ephemeral-storage"] = draw(st.sampled_from(["0", "1Gi", "10Gi"]))
    for scalar in SCALARS:
        if draw(st.integers(0, 4)) == 0:
            out[scalar] = str(draw(st.integers(0, 3)))
    return out


@st.composite
def host_port_specs(draw: st.DrawFn, max_size: int = 2) -> list[tuple[int, str, str]]:
    return draw(
        st.lists(
            st.tuples(
                st.sampled_from(PORTS),
                st.sampled_from(["", "TCP", "UDP"]),
                st.sampled_from(HOST_IPS),
            ),
            min_size=1,
            max_size=max_size,
        )
    )


@st.composite
def nodes(draw: st.DrawFn, name: str) -> Raw:
    labels = {HOSTNAME: name}
    for key, values in LABEL_VALUES.items():
        if draw(st.booleans()):
            labels[key] = draw(st.sampled_from(values))
    extra = {}
    for scalar in SCALARS:
        if draw(st.booleans()):
            extra[scalar] = str(draw(st.integers(0, 8)))
    if draw(st.booleans()):
        extra["ephemeral-storage"] = draw(st.sampled_from(["0", "20Gi", "100Gi"]))
    taints = []
    if draw(st.integers(0, 2)) == 0:
        taints = draw(
            st.lists(
                st.tuples(
                    st.sampled_from(TAINT_KEYS),
                    st.sampled_from(["", "a", "b"]),
                    st.sampled_from(EFFECTS),
                ),
                min_size=1,
                max_size=3,
                unique_by=lambda t: (t[0], t[2]),
            )
        )
    images = draw(
        st.lists(
            st.tuples(
                st.lists(st.sampled_from(NODE_IMAGES), min_size=1, max_size=2, unique=True),
                st.integers(1, 3000).map(lambda mb: mb * MB),
            ),
            max_size=3,
        )
    )
    return make_node(
        name,
        cpu=draw(
            st.one_of(
                st.none(),
                st.sampled_from(["1", "2", "4", "8"]),
                st.integers(0, 16000).map(lambda m: f"{m}m"),
            )
        ),
        memory=draw(
            st.one_of(
                st.none(),
                st.sampled_from(["1Gi", "4Gi", "16Gi"]),
                st.integers(0, 16 * 1024).map(lambda m: f"{m}Mi"),
            )
        ),
        pods=draw(st.one_of(st.none(), st.integers(0, 12).map(str))),
        labels=labels,
        taints=taints,
        unschedulable=draw(st.integers(0, 9)) == 0,
        images=images,
        allocatable=extra,
    )


APPS = ("web", "db", "cache")
NAMESPACES = ("default", "team-a", "team-b")


TIERS = ("front", "back")


@st.composite
def app_selectors(draw: st.DrawFn) -> Raw:
    """A LabelSelector over the app label: matchLabels or one expression."""
    if draw(st.booleans()):
        return {"matchLabels": {"app": draw(st.sampled_from(APPS))}}
    operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    expression: Raw = {"key": "app", "operator": operator}
    if operator in ("In", "NotIn"):
        expression["values"] = draw(
            st.lists(st.sampled_from(APPS), min_size=1, max_size=2, unique=True)
        )
    return {"matchExpressions": [expression]}


@st.composite
def pod_labels(draw: st.DrawFn) -> dict[str, str] | None:
    """Often an app label, sometimes a tier label too (for matchLabelKeys)."""
    labels = {}
    if draw(st.integers(0, 4)):
        labels["app"] = draw(st.sampled_from(APPS))
    if draw(st.integers(0, 2)) == 0:
        labels["tier"] = draw(st.sampled_from(TIERS))
    return labels or None


@st.composite
def pod_terms(draw: st.DrawFn) -> Raw:
    """A pod affinity term over app labels, in some namespaces, by zone or hostname."""
    selector = draw(app_selectors())
    term: Raw = {
        "labelSelector": selector,
        "topologyKey": draw(st.sampled_from([ZONE, HOSTNAME, "team"])),
    }
    scope = draw(st.integers(0, 3))
    if scope == 1:
        term["namespaces"] = draw(
            st.lists(st.sampled_from(NAMESPACES), min_size=1, max_size=2, unique=True)
        )
    elif scope == 2:
        term["namespaceSelector"] = {}
    elif scope == 3:
        term["namespaceSelector"] = {
            "matchLabels": {"tier": draw(st.sampled_from(["front", "back"]))}
        }
    return term


@st.composite
def pod_affinity_sections(draw: st.DrawFn) -> tuple[Raw | None, Raw | None]:
    """Random podAffinity / podAntiAffinity sections (often none)."""
    sections: list[Raw | None] = []
    for _ in range(2):
        if draw(st.integers(0, 2)) != 0:
            sections.append(None)
            continue
        section: Raw = {}
        required = draw(st.lists(pod_terms(), max_size=2))
        preferred = draw(st.lists(st.tuples(st.integers(1, 100), pod_terms()), max_size=2))
        if required:
            section["requiredDuringSchedulingIgnoredDuringExecution"] = required
        if preferred:
            section["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred
            ]
        sections.append(section or None)
    return sections[0], sections[1]


@st.composite
def bound_pods(draw: st.DrawFn, index: int, node_names: list[str]) -> Raw:
    node_name = draw(st.one_of(st.sampled_from(node_names), st.just("gone-node")))
    requests = draw(st.lists(request_maps(), max_size=2))
    affinity, anti = draw(pod_affinity_sections())
    raw = make_pod(
        f"bound-{index}",
        namespace=draw(st.sampled_from(NAMESPACES)),
        labels=draw(pod_labels()),
        pod_affinity=affinity,
        pod_anti_affinity=anti,
        node_name=node_name,
        requests=requests,
        init=draw(st.lists(request_maps(), max_size=1)),
        host_ports=draw(host_port_specs()) if draw(st.booleans()) else (),
        images=draw(st.lists(st.sampled_from(POD_IMAGES), max_size=2)),
        priority=draw(st.sampled_from([None, 0, 10, 100, 2000])),  # preemption's victims
    )
    if draw(st.integers(0, 7)) == 0:  # being deleted: never counted by PodTopologySpread
        raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if draw(st.booleans()):  # start times rank victims (most important first)
        raw["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:0{draw(st.integers(0, 3))}Z"
    return raw


@st.composite
def budgets(draw: st.DrawFn) -> list[Raw]:
    """PodDisruptionBudgets over the pods' app labels (preemption prefers to spare them)."""
    return [
        pdb_object(
            f"pdb-{i}",
            draw(app_selectors()),
            draw(st.integers(0, 2)),
            namespace=draw(st.sampled_from(NAMESPACES)),
        )
        for i in range(draw(st.integers(0, 2)))
    ]


@st.composite
def spread_constraints(draw: st.DrawFn) -> Raw:
    """A topologySpreadConstraint by hostname, zone or team, with the optional fields."""
    raw: Raw = {
        # now and then 0, which does not decode: an Error at PreFilter or PreScore
        "maxSkew": draw(st.integers(1, 3)) if draw(st.integers(0, 15)) else 0,
        "topologyKey": draw(st.sampled_from([HOSTNAME, HOSTNAME, ZONE, ZONE, "team"])),
        "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
    }
    selector = draw(st.integers(0, 5))
    if selector == 0:
        raw["labelSelector"] = {}
    elif selector > 1:  # 1: no labelSelector (nil: matches nothing)
        raw["labelSelector"] = draw(app_selectors())
    if draw(st.integers(0, 3)) == 0:
        raw["minDomains"] = draw(st.integers(1, 4))
    if draw(st.integers(0, 3)) == 0:
        raw["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.integers(0, 3)) == 0:
        raw["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.integers(0, 3)) == 0:
        raw["matchLabelKeys"] = draw(
            st.lists(st.sampled_from(["tier", "app", "absent"]), min_size=1, max_size=2)
        )
    return raw


@st.composite
def selecting_objects(
    draw: st.DrawFn, namespaces: tuple[str, ...] = NAMESPACES, apps: tuple[str, ...] = APPS
) -> list[Raw]:
    """Services, controllers and sets over app/tier labels (default spread selectors)."""
    out: list[Raw] = []
    for index in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(["Service", "ReplicationController", "ReplicaSet", "StatefulSet"])
        )
        namespace = draw(st.sampled_from(namespaces))
        labels = {"app": draw(st.sampled_from(apps))}
        if draw(st.integers(0, 3)) == 0:
            labels["tier"] = draw(st.sampled_from(TIERS))
        if kind in ("Service", "ReplicationController"):
            spec: Raw = {"selector": labels} if draw(st.integers(0, 5)) else {}
        else:
            spec = {"selector": draw(st.one_of(st.just({"matchLabels": labels}), app_selectors()))}
        out.append(
            {
                "kind": kind,
                "metadata": {"name": f"{kind.lower()}-{index}", "namespace": namespace},
                "spec": spec,
            }
        )
    return out


@st.composite
def requirements(draw: st.DrawFn, node_names: list[str]) -> Raw:
    kind = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    key = draw(st.sampled_from([*LABEL_VALUES, "missing"]))
    if kind in ("In", "NotIn"):
        values = draw(
            st.lists(
                st.sampled_from([*LABEL_VALUES.get(key, ("x",)), *node_names[:2]]),
                min_size=1,
                max_size=3,
            )
        )
        return {"key": key, "operator": kind, "values": values}
    if kind in ("Gt", "Lt"):
        return {
            "key": draw(st.sampled_from(["gen", "team"])),
            "operator": kind,
            "values": [str(draw(st.integers(0, 11)))],
        }
    return {"key": key, "operator": kind}


@st.composite
def selector_terms(draw: st.DrawFn, node_names: list[str]) -> Raw:
    term: Raw = {}
    expressions = draw(st.lists(requirements(node_names), max_size=2))
    if expressions:
        term["matchExpressions"] = expressions
    if draw(st.integers(0, 2)) == 0:
        term["matchFields"] = [
            {
                "key": "metadata.name",
                "operator": draw(st.sampled_from(["In", "NotIn"])),
                "values": [draw(st.sampled_from([*node_names, "nowhere"]))],
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
    return term


@st.composite
def affinities(draw: st.DrawFn, node_names: list[str]) -> Raw | None:
    if draw(st.integers(0, 2)) == 0:
        return None
    required = draw(st.one_of(st.none(), st.lists(selector_terms(node_names), max_size=3)))
    preferred = draw(
        st.lists(st.tuples(st.integers(0, 100), selector_terms(node_names)), max_size=3)
    )
    return node_affinity(required=required, preferred=preferred)


@st.composite
def tolerations(draw: st.DrawFn) -> list[Raw]:
    out = []
    for _ in range(draw(st.integers(0, 3))):
        shape = draw(st.sampled_from(["equal", "exists", "any"]))
        effect = draw(st.sampled_from(["", *EFFECTS]))
        if shape == "any":
            out.append(toleration(operator="Exists", effect=effect))
        elif shape == "exists":
            out.append(toleration(draw(st.sampled_from(TAINT_KEYS)), "Exists", effect=effect))
        else:
            key = draw(st.sampled_from(TAINT_KEYS))
            out.append(
                toleration(
                    key,
                    draw(st.sampled_from(["", "Equal"])),
                    draw(st.sampled_from(["", "a", "b"])),
                    effect,
                )
            )
    return out


@st.composite
def incoming_pods(draw: st.DrawFn, node_names: list[str]) -> Raw:
    shape = draw(st.sampled_from(["requests", "containers", "empty"]))
    init_containers = None
    if draw(st.integers(0, 3)) == 0:
        init_containers = [
            container(
                f"init{i}",
                requests=r,
                restart_policy=draw(st.sampled_from([None, "Always"])),
                image=draw(st.sampled_from(POD_IMAGES)),
            )
            for i, r in enumerate(draw(st.lists(request_maps(), min_size=1, max_size=2)))
        ]
    node_selector = None
    if draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(list(LABEL_VALUES)))
        node_selector = {key: draw(st.sampled_from(LABEL_VALUES[key]))}
    overhead = {"cpu": "50m", "memory": "32Mi"} if draw(st.integers(0, 5)) == 0 else None
    images = draw(st.lists(st.sampled_from(POD_IMAGES), max_size=3))
    requests = (
        draw(st.lists(request_maps(), min_size=1, max_size=3)) if shape == "requests" else None
    )
    ports = draw(host_port_specs()) if draw(st.booleans()) else []
    containers = None
    if shape == "containers":
        containers = [
            container(f"c{i}", image=image, ports=ports if i == 0 else ())
            for i, image in enumerate(images or ["img-a"])
        ]
    affinity_section, anti_section = draw(pod_affinity_sections())
    spread = draw(st.lists(spread_constraints(), max_size=3)) if draw(st.booleans()) else []
    return make_pod(
        "incoming",
        namespace=draw(st.sampled_from(NAMESPACES)),
        labels=draw(pod_labels()),
        topology_spread=spread,
        pod_affinity=affinity_section,
        pod_anti_affinity=anti_section,
        requests=requests,
        containers=containers,
        init_containers=init_containers,
        overhead=overhead,
        node_name=draw(st.sampled_from(node_names)) if draw(st.integers(0, 9)) == 0 else "",
        host_ports=ports if shape != "containers" else (),
        tolerations=draw(tolerations()),
        node_selector=node_selector,
        affinity=draw(affinities(node_names)),
        images=images if shape != "containers" else (),
        priority=draw(st.sampled_from([None, 50, 1000])),
    )


@st.composite
def shapes(draw: st.DrawFn) -> tuple[ShapePoint, ...]:
    utilizations = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=4)))
    return tuple(ShapePoint(u, draw(st.integers(0, 10))) for u in utilizations)


@st.composite
def resource_specs(draw: st.DrawFn) -> tuple[ResourceSpec, ...]:
    names = draw(
        st.lists(
            st.sampled_from(["cpu", "memory", "ephemeral-storage", *SCALARS]),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    return tuple(ResourceSpec(name, draw(st.integers(1, 5))) for name in names)


@st.composite
def profiles(draw: st.DrawFn, node_names: list[str]):
    base = default_profile()
    kind = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    resources = draw(st.one_of(st.just(ScoringStrategy().resources), resource_specs()))
    strategy = ScoringStrategy(
        type=kind,
        resources=resources,
        shape=draw(shapes()) if kind == "RequestedToCapacityRatio" else (),
    )
    args: dict[str, Any] = {
        "NodeResourcesFit": NodeResourcesFitArgs(
            ignored_resources=tuple(draw(st.lists(st.sampled_from(SCALARS), max_size=1))),
            ignored_resource_groups=tuple(
                draw(st.lists(st.sampled_from(["vendor.io", "example.com"]), max_size=1))
            ),
            scoring_strategy=strategy,
        ),
    }
    if draw(st.booleans()):
        args["NodeResourcesBalancedAllocation"] = NodeResourcesBalancedAllocationArgs(
            resources=draw(resource_specs())
        )
    if draw(st.integers(0, 3)) == 0:
        added = draw(affinities(node_names))
        if added is not None:
            args["NodeAffinity"] = NodeAffinityArgs(added_affinity=added_affinity(added))
    if draw(st.integers(0, 3)) == 0:
        args["PodTopologySpread"] = PodTopologySpreadArgs(
            "List", tuple(draw(st.lists(spread_constraints(), min_size=1, max_size=2)))
        )
    filters = base.resolved.filter
    if draw(st.integers(0, 3)) == 0:
        filters = tuple(name for name in filters if draw(st.booleans()))
    score = tuple((name, draw(st.integers(1, 10))) for name, _ in base.resolved.score)
    post_filter = ("DefaultPreemption",) if draw(st.integers(0, 3)) else ()
    return profile_with(filter=filters, score=score, post_filter=post_filter, args=args)


@st.composite
def scenarios(draw: st.DrawFn):
    node_count = draw(st.integers(1, 30))
    names = [f"node-{i}" for i in range(node_count)]
    node_objects = [draw(nodes(name)) for name in names]
    pod_objects = [draw(bound_pods(i, names)) for i in range(draw(st.integers(0, 40)))]
    namespace_objects = [
        {
            "kind": "Namespace",
            "metadata": {"name": n, "labels": {"tier": draw(st.sampled_from(["front", "back"]))}},
        }
        for n in NAMESPACES
    ]
    return (
        snapshot_of(
            node_objects,
            pod_objects + namespace_objects + draw(selecting_objects()) + draw(budgets()),
        ),
        pod_info(draw(incoming_pods(names))),
        draw(profiles(names)),
        draw(st.integers(0, 2**16)),
    )


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios())
def test_vectorised_engine_matches_the_reference(scenario) -> None:
    from asched.explain.engine import evaluate as vectorised_evaluate

    snapshot, pod, profile, seed = scenario
    want = reference_evaluate(snapshot, pod, profile, seed=seed)
    got = vectorised_evaluate(snapshot, pod, profile, seed=seed)
    assert got.to_json() == want.to_json()
    assert got == want


@st.composite
def spread_scenarios(draw: st.DrawFn):
    """Few roomy nodes, many resource-free pods: spreading decides (skew, domains, scores)."""
    names = [f"node-{i}" for i in range(draw(st.integers(1, 8)))]
    node_objects = []
    for name in names:
        labels = {HOSTNAME: name}
        for key in (ZONE, "team"):
            if draw(st.integers(0, 4)):
                labels[key] = draw(st.sampled_from(LABEL_VALUES[key]))
        taints = []
        if draw(st.integers(0, 4)) == 0:
            taints = [("dedicated", "a", draw(st.sampled_from(EFFECTS)))]
        node_objects.append(
            make_node(name, cpu="8", memory="16Gi", pods="110", labels=labels, taints=taints)
        )
    pod_objects = []
    for index in range(draw(st.integers(0, 40))):
        raw = make_pod(
            f"bound-{index}",
            namespace=draw(st.sampled_from(["default", "default", "team-a"])),
            labels=draw(st.one_of(st.just({"app": "web"}), pod_labels())),
            node_name=draw(st.sampled_from(names)),
        )
        if draw(st.integers(0, 7)) == 0:
            raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        pod_objects.append(raw)
    node_selector = None
    if draw(st.integers(0, 4)) == 0:
        node_selector = {ZONE: draw(st.sampled_from(LABEL_VALUES[ZONE]))}
    incoming = make_pod(
        "incoming",
        namespace=draw(st.sampled_from(["default", "default", "team-a"])),
        labels=draw(st.one_of(st.just({"app": "web"}), pod_labels())),
        topology_spread=draw(st.lists(spread_constraints(), max_size=3)),
        tolerations=draw(tolerations()),
        node_selector=node_selector,
        affinity=draw(affinities(names)),
    )
    args: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        args["PodTopologySpread"] = PodTopologySpreadArgs(
            "List", tuple(draw(st.lists(spread_constraints(), min_size=1, max_size=2)))
        )
    return (
        snapshot_of(
            node_objects,
            pod_objects + draw(selecting_objects(("default", "default", "team-a"), ("web", "db"))),
        ),
        pod_info(incoming),
        default_profile(args),
        draw(st.integers(0, 2**16)),
    )


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(spread_scenarios())
def test_vectorised_spreading_matches_the_reference(scenario) -> None:
    from asched.explain.engine import evaluate as vectorised_evaluate

    snapshot, pod, profile, seed = scenario
    want = reference_evaluate(snapshot, pod, profile, seed=seed)
    got = vectorised_evaluate(snapshot, pod, profile, seed=seed)
    assert got.to_json() == want.to_json()
    assert got == want


@st.composite
def preemption_scenarios(draw: st.DrawFn):
    """Full nodes and a high-priority pod: preemption decides (victims, PDBs, nominations).

    Nodes of 1 CPU hold bound pods of 300-600m at priorities 0/10/100 (often labelled with
    an app, which budgets and the incoming pod's anti-affinity or spreading look at); the
    incoming pod (priority 1000, 700m) rarely fits anywhere, so the default profile's
    DefaultPreemption runs on most examples and succeeds on many.
    """
    node_count = draw(st.integers(2, 6))
    names = [f"node-{i}" for i in range(node_count)]
    node_objects = [
        make_node(
            name,
            cpu="1",
            memory="4Gi",
            labels={HOSTNAME: name, ZONE: LABEL_VALUES[ZONE][i % 2]},
        )
        for i, name in enumerate(names)
    ]
    pod_objects = []
    for index in range(draw(st.integers(node_count, 3 * node_count))):
        raw = make_pod(
            f"bound-{index}",
            node_name=names[index % node_count],
            cpu=f"{draw(st.sampled_from([300, 400, 600]))}m",
            priority=draw(st.sampled_from([0, 10, 100])),
            labels={"app": draw(st.sampled_from(APPS))} if draw(st.integers(0, 3)) else None,
        )
        if draw(st.booleans()):
            raw["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:0{draw(st.integers(0, 3))}Z"
        pod_objects.append(raw)
    extra: dict[str, Any] = {}
    shape = draw(st.sampled_from(["plain", "plain", "anti", "spread"]))
    if shape == "anti":
        extra["pod_anti_affinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": draw(app_selectors()), "topologyKey": HOSTNAME}
            ]
        }
    elif shape == "spread":
        extra["labels"] = {"app": draw(st.sampled_from(APPS))}
        extra["topology_spread"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": draw(app_selectors()),
            }
        ]
    incoming = make_pod("incoming", cpu="700m", priority=1000, **extra)
    return (
        snapshot_of(node_objects, pod_objects + draw(budgets())),
        pod_info(incoming),
        default_profile(),
        draw(st.integers(0, 2**16)),
    )


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(preemption_scenarios())
def test_vectorised_preemption_matches_the_reference(scenario) -> None:
    from asched.explain.engine import evaluate as vectorised_evaluate

    snapshot, pod, profile, seed = scenario
    want = reference_evaluate(snapshot, pod, profile, seed=seed)
    got = vectorised_evaluate(snapshot, pod, profile, seed=seed)
    event(f"preemption: {want.preemption.code.name if want.preemption else 'not run'}")
    assert got.to_json() == want.to_json()
    assert got == want
