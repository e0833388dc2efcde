"""The per-shape decode cache against the full decoder, on random runs of pods.

Pods are drawn from a few spec variations (requests, limits, images, ports, tolerations,
selectors, priorities, namespaces...) and per-pod fields (names, labels, token volumes,
nodes, phases, malformed labels). Decoded one after the other through one
:class:`~asched.cluster.pod_shapes.PodShapes`, each must equal its own full
``decode_pod``, or raise the same error: a record is never shared between pods whose
specs differ in anything the decoder reads.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, event, given, settings, strategies as st

from asched.cluster.decode import decode_pod
from asched.cluster.pod_shapes import PodShapes
from asched.errors import DecodeError
from asched.tools.bench import templates

Raw = dict[str, Any]

_SPEC_CHOICES: dict[str, st.SearchStrategy[Any]] = {
    "cpu": st.sampled_from(["100m", "0.1", "200m", 1, "1"]),
    "memory_limit_only": st.booleans(),
    "image": st.sampled_from(["pause", "nginx"]),
    "host_port": st.sampled_from([0, 8080]),
    "host_network": st.sampled_from([None, False, True, 0]),
    "tolerations": st.sampled_from([None, [], [{"key": "k", "operator": "Exists"}]]),
    "node_selector": st.sampled_from([None, {}, {"zone": "a"}, {"zone": "b"}]),
    "priority": st.sampled_from([None, 0, 5, True]),
    "namespace": st.sampled_from(["default", "other", None]),
    "anti_affinity": st.booleans(),
    "sidecar": st.sampled_from([None, "Always", "OnFailure"]),
}
_POD_CHOICES: dict[str, st.SearchStrategy[Any]] = {
    "name": st.sampled_from(["a", "b", "c"]),
    "app": st.sampled_from(["bench", "web", 7]),  # 7: a malformed label
    "token": st.sampled_from(["aaaaa", "bbbbb"]),
    "node": st.sampled_from([None, "n1", "n2"]),
    "phase": st.sampled_from([None, "Pending", "Running"]),
    "ephemeral": st.booleans(),
}


def _pod(spec: dict[str, Any], per_pod: dict[str, Any]) -> Raw:
    raw = copy.deepcopy(templates.pod(per_pod["name"]))
    meta, body = raw["metadata"], raw["spec"]
    meta["labels"] = {"app": per_pod["app"]}
    if spec["namespace"] is None:
        del meta["namespace"]
    else:
        meta["namespace"] = spec["namespace"]
    container = body["containers"][0]
    container["image"] = spec["image"]
    container["resources"]["requests"]["cpu"] = spec["cpu"]
    if spec["memory_limit_only"]:
        del container["resources"]["requests"]["memory"]
    container["ports"] = [{"containerPort": 80, "hostPort": spec["host_port"]}]
    volume = f"kube-api-access-{per_pod['token']}"
    container["volumeMounts"] = [{"name": volume, "mountPath": "/t"}]
    body["volumes"] = [{"name": volume, "projected": {"sources": []}}]
    if per_pod["ephemeral"]:
        body["volumes"].append({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}})
    for field, key in (
        ("host_network", "hostNetwork"),
        ("tolerations", "tolerations"),
        ("node_selector", "nodeSelector"),
        ("priority", "priority"),
    ):
        if spec[field] is not None:
            body[key] = spec[field]
    if spec["anti_affinity"]:
        term = {"labelSelector": {"matchLabels": {"app": "bench"}}, "topologyKey": "zone"}
        body["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    if spec["sidecar"] is not None:
        body["initContainers"] = [
            {"name": "s", "image": "envoy", "restartPolicy": spec["sidecar"], "ports": []}
        ]
    if per_pod["node"] is not None:
        body["nodeName"] = per_pod["node"]
    if per_pod["phase"] is not None:
        raw["status"] = {"phase": per_pod["phase"]}
    return raw


@st.composite
def _runs(draw: st.DrawFn) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """A run of pods drawn from a spec and up to two variants of it, each differing in
    one field (so that shapes repeat, and near misses are tried)."""
    base = draw(st.fixed_dictionaries(_SPEC_CHOICES))
    fields = draw(st.lists(st.sampled_from(sorted(_SPEC_CHOICES)), max_size=2))
    specs = [base, *({**base, field: draw(_SPEC_CHOICES[field])} for field in fields)]
    per_pod = st.fixed_dictionaries(_POD_CHOICES)
    picks = draw(st.lists(st.tuples(st.sampled_from(specs), per_pod), min_size=2, max_size=8))
    return picks


def _outcome(decode: Any, raw: Raw) -> Any:
    try:
        return decode(raw)
    except DecodeError as exc:
        return str(exc)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_runs())
def test_every_cached_decode_equals_the_full_decode(pods: list[tuple[Any, Any]]) -> None:
    shapes = PodShapes()
    for spec, per_pod in pods:
        raw = _pod(spec, per_pod)
        assert _outcome(shapes.decode, raw) == _outcome(decode_pod, copy.deepcopy(raw))
    event(f"cache hits: {shapes.hits}" if shapes.hits < 3 else "cache hits: 3 or more")
