"""Adversarial quantities (and odd selectors) through decode -> table -> plugins, from the
API and from snapshots.

Every quantity here is one a genuine kube-apiserver accepts (each valid alone; it caps a
value at int64's maximum), but they are drawn to hurt: ``7Ei`` twice in one pod,
``999999Pi``, 10,000-digit numbers, exponents of 30, sub-nano fractions, overheads and
sidecars that stack, nodes of absurd capacity, images of 2^70 bytes; and, in the same pods, selectors and integers at the edges of what
the API accepts (``Gt`` int64 extremes, ``{}`` and NotIn-on-absent selectors, maxSkew and
minDomains of 2^31-1, tolerationSeconds of 2^63-1, priorities at int32's ends). Two
entry points:

* **the API**: raw JSON objects applied as watch events by the live scheduler's
  :class:`~asched.scheduler.ingest.Ingest` into its table, then one decision of the
  vectorised :class:`~asched.engine.algorithm.Algorithm` (no guard around it: the
  plugins themselves must not raise, and NumPy overflow warnings are errors in tests);
* **a snapshot**: the same objects as YAML text, loaded as ``asched explain --snapshot``
  loads it, evaluated by the explain engine and by the scalar reference, which must agree.

Invariants: nothing raises or warns; nothing that the API accepts is undecodable; a pod
beyond asched's range is rejected everywhere with a message naming a field it has; a pod
in range that is placed fits its node (no over-commit), by exact integer arithmetic.
"""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings, strategies as st

from asched import metrics
from asched.api.watch import WatchEvent
from asched.cluster import bounds
from asched.cluster.decode import decode_pod
from asched.cluster.quantity import canonical
from asched.cluster.snapshot import build_snapshot, objects_of
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.explain.engine import evaluate as engine_evaluate
from asched.framework.runtime import Framework
from asched.framework.status import Code
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from asched.tools.reference import evaluate as reference_evaluate
from tests.configs import default_config

SCHEDULER = "default-scheduler"
RESOURCES = ("cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi")

ordinary = st.sampled_from(["0", "1", "100m", "250m", "2", "512Mi", "1Gi", "4Gi", "1.5", "3"])
absurd = st.sampled_from(
    [
        "7Ei",
        "8Ei",
        "999999Pi",
        "9223372036854775",
        "9223372036854775807",
        "4Pi",
        "8Pi",
        "1e30",
        "99999E",
        "1e-50",
        "0." + "0" * 300 + "1",
        "9" * 10_000,
        "123456789012345678901234567890",
        "1n",
    ]
)
quantity = st.one_of(ordinary, ordinary, absurd)
requests = st.dictionaries(st.sampled_from(RESOURCES), quantity, max_size=3)


@st.composite
def containers(draw: st.DrawFn, prefix: str, max_size: int) -> list[dict[str, Any]]:
    out = []
    for index in range(draw(st.integers(0, max_size))):
        resources: dict[str, Any] = {"requests": draw(requests)}
        if draw(st.booleans()):
            resources["limits"] = draw(requests)
        out.append({"name": f"{prefix}{index}", "image": "img", "resources": resources})
    return out


INT64_MAX, INT64_MIN, INT32_MAX = 2**63 - 1, -(2**63), 2**31 - 1
odd_values = st.sampled_from(["0", "-1", str(INT64_MAX), str(INT64_MIN), "a", "z" * 63])


@st.composite
def odd_constraints(draw: st.DrawFn) -> dict[str, Any]:
    """Selectors and integers at the edges of what the API server accepts."""
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["priority"] = draw(st.sampled_from([-(2**31), INT32_MAX, 0, 1_000_000_000]))
    if draw(st.booleans()):
        op = draw(st.sampled_from(["Gt", "Lt", "In", "NotIn", "Exists", "DoesNotExist"]))
        expr: dict[str, Any] = {
            "key": draw(st.sampled_from(["zone", "rank", "absent"])),
            "operator": op,
        }
        if op in ("Gt", "Lt"):
            expr["values"] = [draw(st.sampled_from([str(INT64_MAX), str(INT64_MIN), "0"]))]
        elif op in ("In", "NotIn"):
            expr["values"] = draw(st.lists(odd_values, min_size=1, max_size=3))
        spec.setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expr]}]
            }
        }
    if draw(st.booleans()):
        selector = draw(
            st.sampled_from(
                [
                    {},  # matches every pod
                    {"matchExpressions": [{"key": "absent", "operator": "NotIn", "values": ["x"]}]},
                    {"matchLabels": {"app": "z" * 63}},
                ]
            )
        )
        spec.setdefault("affinity", {})["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    if draw(st.booleans()):
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": draw(st.sampled_from([1, INT32_MAX])),
                "minDomains": draw(st.sampled_from([1, INT32_MAX])),
                "topologyKey": draw(st.sampled_from(["zone", "kubernetes.io/hostname"])),
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    if draw(st.booleans()):
        spec["tolerations"] = [
            {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": INT64_MAX}
        ]
    return spec


@st.composite
def pods(draw: st.DrawFn, name: str, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": SCHEDULER,
        "containers": draw(containers("c", 3)),
    }
    inits = draw(containers("i", 2))
    for init in inits:
        if draw(st.booleans()):
            init["restartPolicy"] = "Always"  # a sidecar: stacks onto the total
    if inits:
        spec["initContainers"] = inits
    if draw(st.booleans()):
        spec["overhead"] = draw(requests)
    if node:
        spec["nodeName"] = node
    spec.update(draw(odd_constraints()))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": {"app": draw(st.sampled_from(["web", "z" * 63]))},
        },
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


@st.composite
def nodes(draw: st.DrawFn, name: str) -> dict[str, Any]:
    allocatable = {"pods": "110", **draw(st.dictionaries(st.sampled_from(RESOURCES), quantity))}
    images = [
        {"names": [f"img-{i}"], "sizeBytes": draw(st.sampled_from([0, 10**6, 2**62, 2**70]))}
        for i in range(draw(st.integers(0, 2)))
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "zone": draw(st.sampled_from(["a", "b"])),
                "rank": draw(odd_values),
            },
        },
        "status": {"allocatable": allocatable, "images": images},
    }


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    node_objs = [draw(nodes(f"n{i}")) for i in range(draw(st.integers(1, 4)))]
    bound = [
        draw(
            pods(
                f"bound{i}", node=draw(st.sampled_from([n["metadata"]["name"] for n in node_objs]))
            )
        )
        for i in range(draw(st.integers(0, 4)))
    ]
    return node_objs, bound, draw(pods("incoming"))


def _field_exists(pod: dict[str, Any], message: str) -> bool:
    """The message names a field the pod has (or its total, which it always has)."""
    if message.startswith("spec: the pod's total"):
        return True
    path = message.split(":", 1)[0]  # e.g. spec.containers[1].resources.requests.example.com/gpu
    for marker in (".requests.", ".limits.", "spec.overhead."):
        if marker in path:
            head, resource = path.rsplit(marker, 1)
            head = f"{head}{marker}".strip(".")
            break
    else:
        raise AssertionError(f"no quantity field in {message!r}")
    node: Any = pod
    for part in head.replace("]", "").replace("[", ".").split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    node = node[resource]
    return isinstance(node, str)


def _fits(table: NodeTable, row: int, requests: dict[str, int]) -> bool:
    """Exact integer check (Python ints, no int64): the pod fits what is left on ``row``."""
    for resource, amount in requests.items():
        axis = table.axis_index.get(resource)
        free = (
            0
            if axis is None
            else int(table.allocatable[axis][row]) - int(table.requested[axis][row])
        )
        if amount > free:
            return False
    return True


SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(clusters())
def test_from_the_api(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]],
) -> None:
    node_objs, bound, incoming = cluster
    profile = default_config().profiles[0]
    table = NodeTable()
    queue = SchedulingQueue(clock=lambda: 0.0)
    ingest = Ingest(table, Ledger(table), queue, {SCHEDULER})
    internal = metrics.REGISTRY.get_sample_value(
        "asched_internal_errors_total", {"phase": "ingest"}
    )
    for obj in (*node_objs, *bound, incoming):
        kind = "nodes" if obj["kind"] == "Node" else "pods"
        ingest.apply(WatchEvent(kind, "ADDED", obj))
    assert ingest.decode_errors == 0  # the API accepts every one of them: so does asched
    after = metrics.REGISTRY.get_sample_value("asched_internal_errors_total", {"phase": "ingest"})
    assert after == internal
    qp = queue.pop()
    assert qp is not None
    pod = qp.pod
    for amount in (*pod.requests.values(), pod.nonzero_cpu, pod.nonzero_memory):
        assert 0 <= amount <= bounds.MAX_AMOUNT
    for axis in range(len(table.axes)):
        assert int(table.allocatable[axis].max(initial=0)) <= bounds.MAX_AMOUNT

    decision = Algorithm(Framework(profile), table, seed=3).schedule(pod)

    if pod.out_of_range:
        event("out of range")
        assert decision.status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert pod.out_of_range in decision.message()
        assert _field_exists(incoming, pod.out_of_range)
    elif decision.node is not None:
        event("placed")
        assert decision.row is not None
        assert _fits(table, decision.row, dict(pod.requests))
    else:
        event("unschedulable")
        assert decision.status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        assert decision.message().startswith("0/")


@SETTINGS
@given(clusters())
def test_from_a_snapshot(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]],
) -> None:
    node_objs, bound, incoming = cluster
    text = yaml.safe_dump_all([*node_objs, *bound])
    snapshot = build_snapshot(objects_of(text, "cluster.yaml"), "cluster.yaml")
    [raw_pod] = objects_of(yaml.safe_dump(incoming), "pod.yaml")  # as explain --pod reads it
    pod = decode_pod(raw_pod)
    profile = default_config().profiles[0]

    engine = engine_evaluate(snapshot, pod, profile, seed=5)
    reference = reference_evaluate(snapshot, pod, profile, seed=5)

    assert engine == reference
    if pod.out_of_range:
        assert engine.selected is None
        assert engine.message is not None
        assert pod.out_of_range in engine.message
    for resource, text_amount in (incoming["spec"].get("overhead") or {}).items():
        assert pod.requests.get(resource, 0) >= min(
            canonical(resource, text_amount), bounds.MAX_AMOUNT
        )
