"""Pod (anti-)affinity terms decode into records; bad ones name the field."""

from __future__ import annotations

import pytest

from asched.cluster.affinity import AffinityTerm
from asched.cluster.decode import decode_pod
from asched.cluster.labelselector import NOTHING, LabelSelector, Requirement, selector_from_set
from asched.errors import DecodeError


def pod_with(affinity: dict, namespace: str = "shop") -> dict:
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": namespace},
        "spec": {"containers": [], "affinity": affinity},
    }


def term(**fields) -> dict:
    return {"topologyKey": "kubernetes.io/hostname", **fields}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(
            term(labelSelector={"matchLabels": {"app": "web"}}),
            AffinityTerm(
                selector_from_set({"app": "web"}), "kubernetes.io/hostname", frozenset({"shop"})
            ),
            id="no namespaces and no selector: the owner's namespace",
        ),
        pytest.param(
            term(labelSelector={}, namespaceSelector={}),
            AffinityTerm(LabelSelector(), "kubernetes.io/hostname", frozenset(), LabelSelector()),
            id="empty namespace selector: every namespace; empty label selector: every pod",
        ),
        pytest.param(
            term(namespaces=["a", "b"]),
            AffinityTerm(NOTHING, "kubernetes.io/hostname", frozenset({"a", "b"}), None),
            id="nil label selector matches nothing",
        ),
        pytest.param(
            term(
                labelSelector={
                    "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]
                }
            ),
            AffinityTerm(
                LabelSelector((Requirement("tier", "NotIn", frozenset({"db"})),)),
                "kubernetes.io/hostname",
                frozenset({"shop"}),
            ),
            id="expressions",
        ),
    ],
)
def test_required_anti_affinity_terms(raw: dict, expected: AffinityTerm) -> None:
    pod = decode_pod(
        pod_with({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [raw]}})
    )
    assert pod.affinity is not None
    assert pod.affinity.required_anti == (expected,)
    assert pod.affinity.required == ()


def test_selector_semantics() -> None:
    everything, nothing = LabelSelector(), NOTHING
    assert everything.matches({})
    assert not nothing.matches({"app": "web"})
    web = selector_from_set({"app": "web"}).and_selector(
        LabelSelector((Requirement("tier", "DoesNotExist"),))
    )
    assert web.matches({"app": "web"})
    assert not web.matches({"app": "web", "tier": "x"})
    shop = AffinityTerm(web, "zone", frozenset({"shop"}), selector_from_set({"team": "a"}))
    assert shop.matches({"app": "web"}, "shop", {})
    assert shop.matches({"app": "web"}, "other", {"team": "a"})  # via the namespace selector
    assert not shop.matches({"app": "web"}, "other", {"team": "b"})


def test_no_terms_decode_to_none() -> None:
    assert decode_pod(pod_with({"podAffinity": {}})).affinity is None


@pytest.mark.parametrize(
    ("affinity", "path"),
    [
        pytest.param(
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": 7}]
                }
            },
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
            id="topology key not a string",
        ),
        pytest.param(
            {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        term(labelSelector={"matchExpressions": [{"key": "a", "operator": "Near"}]})
                    ]
                }
            },
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
            ".labelSelector.matchExpressions[0].operator",
            id="bad operator",
        ),
        pytest.param(
            {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 0, "podAffinityTerm": term()}
                    ]
                }
            },
            "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            id="weight out of range",
        ),
    ],
)
def test_bad_terms_name_the_field(affinity: dict, path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_pod(pod_with(affinity))
    assert caught.value.path == path
    assert caught.value.obj == "Pod shop/p"
