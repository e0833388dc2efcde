"""Pod create validation a scheduler depends on: affinity (422 or 400) and huge quantities.

The field paths are kube-apiserver v1.20.2's, quirks included: a pod affinity term checks
its labelSelector under ``<term>.matchExpressions``, and reports a bad namespace on
``<term>.namespace``.
"""

from __future__ import annotations

import pytest

from asched.backends.rest import nodes_path, pods_path

from ._support import send_raw

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
BAD_OPERATOR = 'Invalid value: "Foo": not a valid selector operator'
POD_AFFINITY = f"spec.affinity.podAffinity.{REQUIRED}[0]"
NODE_TERM = f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0]"
NAME_REGEX = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _term(operator: str = "In", **extra) -> dict:
    expression = {"key": "app", "operator": operator, "values": ["web"]}
    return {
        "labelSelector": {"matchExpressions": [expression]},
        "topologyKey": "kubernetes.io/hostname",
        **extra,
    }


def _node_term(operator: str) -> dict:
    return {"matchExpressions": [{"key": "zone", "operator": operator, "values": ["a"]}]}


@pytest.mark.parametrize(
    ("affinity", "causes"),
    [
        pytest.param(
            {"podAffinity": {REQUIRED: [_term("Foo")]}},
            [(f"{POD_AFFINITY}.matchExpressions.matchExpressions[0].operator", BAD_OPERATOR)],
            id="pod affinity operator Foo",
        ),
        pytest.param(
            {"podAntiAffinity": {REQUIRED: [_term("Foo")]}},
            [
                (
                    f"spec.affinity.podAntiAffinity.{REQUIRED}[0]"
                    ".matchExpressions.matchExpressions[0].operator",
                    BAD_OPERATOR,
                )
            ],
            id="pod anti-affinity operator Foo",
        ),
        pytest.param(
            {"podAntiAffinity": {PREFERRED: [{"weight": 0, "podAffinityTerm": _term("Foo")}]}},
            [
                (
                    f"spec.affinity.podAntiAffinity.{PREFERRED}[0].weight",
                    "Invalid value: 0: must be in the range 1-100",
                ),
                (
                    f"spec.affinity.podAntiAffinity.{PREFERRED}[0].podAffinityTerm"
                    ".matchExpressions.matchExpressions[0].operator",
                    BAD_OPERATOR,
                ),
            ],
            id="preferred anti-affinity: weight 0 and operator Foo",
        ),
        pytest.param(
            {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [_node_term("Foo")]}}},
            [(f"{NODE_TERM}.matchExpressions[0].operator", BAD_OPERATOR)],
            id="node affinity operator Foo",
        ),
        pytest.param(
            {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": []}}},
            [
                (
                    f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms",
                    "Required value: must have at least one node selector term",
                )
            ],
            id="no node selector term",
        ),
        pytest.param(
            {
                "nodeAffinity": {
                    REQUIRED: {
                        "nodeSelectorTerms": [
                            {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}
                        ]
                    }
                }
            },
            [
                (
                    f"{NODE_TERM}.matchFields[0].operator",
                    'Invalid value: "Exists": ' + "not a valid selector operator",
                )
            ],
            id="matchFields allow In and NotIn only",
        ),
        pytest.param(
            {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [_node_term("Gt")]}}},
            [],  # one value: valid
            id="node affinity Gt with one value is valid",
        ),
        pytest.param(
            {"podAffinity": {REQUIRED: [_term(namespaces=["Bad_NS"], topologyKey="")]}},
            [
                (f"{POD_AFFINITY}.namespace", f'Invalid value: "Bad_NS": {DNS_LABEL}'),
                (f"{POD_AFFINITY}.topologyKey", "Required value: can not be empty"),
                (f"{POD_AFFINITY}.topologyKey", 'Invalid value: "": name part must be non-empty'),
                (f"{POD_AFFINITY}.topologyKey", f'Invalid value: "": {NAME_REGEX}'),
            ],
            id="bad namespace, empty topology key",
        ),
    ],
)
async def test_affinity_is_validated(cluster, affinity, causes):
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "affinity": affinity},
        },
        check=False,
    )

    if not causes:
        assert answer.status == 201, answer.body
        return
    texts = [f"{field}: {message}" for field, message in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    assert (answer.status, answer.body["reason"]) == (422, "Invalid")
    assert answer.body["message"] == f'Pod "p" is invalid: {joined}'
    assert [(c["field"], c["message"]) for c in answer.body["details"]["causes"]] == causes


@pytest.mark.parametrize(
    "affinity",
    [
        pytest.param("anti", id="affinity a string"),
        pytest.param(
            {
                "nodeAffinity": {
                    REQUIRED: {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": 5}]}]
                    }
                }
            },
            id="operator a number",
        ),
        pytest.param({"podAffinity": {REQUIRED: {"topologyKey": "k"}}}, id="terms an object"),
        pytest.param(
            {"nodeAffinity": {PREFERRED: [{"weight": "1", "preference": {}}]}},
            id="weight a string",
        ),
    ],
)
async def test_affinity_of_the_wrong_json_type_is_400(cluster, affinity):
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "affinity": affinity},
        },
        check=False,
    )

    assert (answer.status, answer.body["reason"]) == (400, "BadRequest")
    assert answer.body["message"].startswith('Pod in version "v1" cannot be handled as a Pod: ')


MAX_INT64 = "9223372036854775807"  # 2**63 - 1: where ParseQuantity caps binary quantities


@pytest.mark.parametrize(
    ("requests", "stored"),
    [
        # 999999 * 2**50 ~ 1.1e21 > 2**63 - 1: capped (binary suffix)
        pytest.param({"memory": "999999Pi"}, {"memory": MAX_INT64}, id="999999Pi is capped"),
        # 8 * 2**60 = 2**63: one past the maximum
        pytest.param({"memory": "8Ei"}, {"memory": MAX_INT64}, id="8Ei is capped"),
        pytest.param({"memory": "7Ei"}, {"memory": "7Ei"}, id="7Ei fits"),
        # 1.5 * 2**60 = 1536 * 2**50
        pytest.param({"memory": "1.5Ei"}, {"memory": "1536Pi"}, id="1.5Ei reads back as 1536Pi"),
        pytest.param(
            {"cpu": "9223372036854775"}, {"cpu": "9223372036854775"}, id="cpu 9223372036854775"
        ),
        pytest.param({"cpu": "99999E"}, {"cpu": "99999E"}, id="decimal: not capped"),
        pytest.param(
            {"ephemeral-storage": "1e30"}, {"ephemeral-storage": "1e30"}, id="exponent: not capped"
        ),
    ],
)
async def test_huge_quantities_are_accepted_as_the_real_server_stores_them(
    cluster, requests, stored
):
    pod = await cluster.create_pod(
        "p", cpu=None, memory=None, spec={"containers": [_container("c", requests)]}
    )

    got = await cluster.rest.get(pods_path(cluster.namespace, "p"))

    assert pod["spec"]["containers"][0]["resources"]["requests"] == stored
    assert got["spec"]["containers"][0]["resources"]["requests"] == stored


def _container(name: str, requests: dict[str, str]) -> dict:
    return {"name": name, "image": "i", "resources": {"requests": requests}}


async def test_two_containers_of_7ei_are_accepted(cluster):
    # Their sum (14 * 2**60) exceeds int64, but each quantity is valid on its own.
    containers = [_container("a", {"memory": "7Ei"}), _container("b", {"memory": "7Ei"})]

    pod = await cluster.create_pod("p", spec={"containers": containers})

    assert [c["resources"]["requests"] for c in pod["spec"]["containers"]] == [
        {"memory": "7Ei"},
        {"memory": "7Ei"},
    ]


async def test_a_huge_negative_quantity_is_reported_capped(cluster):
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [_container("c", {"memory": "-999999Pi"})]},
        },
        check=False,
    )

    assert (answer.status, answer.body["message"]) == (
        422,
        'Pod "p" is invalid: spec.containers[0].resources.requests[memory]: '
        f'Invalid value: "-{MAX_INT64}": must be greater than or equal to 0',
    )


async def test_huge_node_capacity_reads_back_capped(cluster):
    name = cluster.unique_name("node")
    await cluster.create_node(name, memory="999999Pi", cpu="99999E")

    node = await cluster.rest.get(nodes_path(name))

    assert node["status"]["capacity"]["memory"] == MAX_INT64
    assert node["status"]["allocatable"]["cpu"] == "99999E"


async def test_an_int64_field_past_int64_does_not_decode(cluster):
    # 2**64 - 1 = 18446744073709551615: valid JSON, too large for activeDeadlineSeconds (int64)
    raw = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":'
        b'[{"name":"c","image":"i"}],"activeDeadlineSeconds":18446744073709551615}}'
    )

    status, body = await send_raw(cluster.kubeconfig, "POST", pods_path(cluster.namespace), raw)

    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"].startswith('Pod in version "v1" cannot be handled as a Pod: ')


async def test_a_label_key_with_two_slashes_gets_gos_qualified_name_message(cluster):
    """``IsQualifiedName`` splits on every '/': ``a/b/c`` is not a prefixed name. (The
    simulator had two validators answering differently for it; there is one now.)"""
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a/b/c": "x"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        check=False,
    )
    assert (answer.status, answer.body["reason"]) == (422, "Invalid")
    [cause] = answer.body["details"]["causes"]
    assert cause["field"] == "metadata.labels"
    assert cause["message"].startswith('Invalid value: "a/b/c": a qualified name must consist')
    assert "with an optional DNS subdomain prefix and '/'" in cause["message"]
