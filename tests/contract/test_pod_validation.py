"""Pod create validation a scheduler depends on: affinity (422 or 400) and huge quantities.

The field paths are kube-apiserver v1.37.2's, quirks included: a bad namespace of a pod
affinity term is reported on ``<term>.namespace``. (v1.20 also reported the term's label
selector under ``<term>.matchExpressions``; v1.37 uses ``<term>.labelSelector``.)
"""

from __future__ import annotations

import pytest

from asched.tools.backends.rest import nodes_path, pods_path

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
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
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
            [(f"{POD_AFFINITY}.labelSelector.matchExpressions[0].operator", BAD_OPERATOR)],
            id="pod affinity operator Foo",
        ),
        pytest.param(
            {"podAntiAffinity": {REQUIRED: [_term("Foo")]}},
            [
                (
                    f"spec.affinity.podAntiAffinity.{REQUIRED}[0]"
                    ".labelSelector.matchExpressions[0].operator",
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
                    ".labelSelector.matchExpressions[0].operator",
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
            {
                "podAffinity": {
                    REQUIRED: [
                        {
                            "labelSelector": {
                                "matchExpressions": [
                                    {"key": "app", "operator": "In", "values": ["a b"]}
                                ]
                            },
                            "namespaceSelector": {
                                "matchExpressions": [{"key": "team", "operator": "Foo"}]
                            },
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            },
            [
                (
                    f"{POD_AFFINITY}.labelSelector.matchExpressions[0].values[0]",
                    f'Invalid value: "a b": {LABEL_VALUE}',
                ),
                (
                    f"{POD_AFFINITY}.namespaceSelector.matchExpressions[0].operator",
                    BAD_OPERATOR,
                ),
            ],
            id="expression values and the namespace selector are checked",
        ),
        pytest.param(
            {"podAffinity": {REQUIRED: [_term(namespaces=["a.b"])]}},
            [(f"{POD_AFFINITY}.namespace", 'Invalid value: "a.b": must not contain dots')],
            id="a namespace with dots",
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


async def test_a_label_key_with_two_slashes_gets_gos_label_key_message(cluster):
    """``IsQualifiedName`` (``content.IsLabelKey`` in v1.37) splits on every '/': ``a/b/c`` is
    not a prefixed name. (The simulator had two validators answering differently for it;
    there is one now.)"""
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
    # v1.20: "a qualified name must consist of..."
    assert cause["message"] == (
        'Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', "
        " or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')"
    )


@pytest.mark.parametrize(
    ("metadata", "causes"),
    [
        pytest.param(
            {"name": "p", "labels": {"a" * 64: "x", "b": "c" * 64}},
            [
                (
                    "metadata.labels",
                    f'Invalid value: "{"a" * 64}": name part must be no more than 63 bytes',
                ),
                ("metadata.labels", f'Invalid value: "{"c" * 64}": must be no more than 63 bytes'),
            ],
            id="label key and value too long: bytes (v1.20: characters)",
        ),
        pytest.param(
            {"name": "p", "finalizers": ["a/b/c", "plain", "example.com/ok"]},
            [
                (
                    "metadata.finalizers",
                    'Invalid value: "a/b/c": a valid label key must consist of alphanumeric '
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional "
                    "DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                ),
                (
                    "metadata.finalizers[1]",
                    'Invalid value: "plain": name is neither a standard finalizer name nor is it '
                    "fully qualified",
                ),
            ],
            id="finalizers",
        ),
    ],
)
async def test_metadata_is_validated(cluster, metadata, causes):
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {"containers": [{"name": "c", "image": "i"}]},
        },
        check=False,
    )

    assert (answer.status, answer.body["reason"]) == (422, "Invalid")
    # a labels map is walked in Go's map order: the causes come in no fixed order
    got = [(c["field"], c["message"]) for c in answer.body["details"]["causes"]]
    assert sorted(got) == sorted(causes)


def _resources(requests: dict, limits: dict | None = None) -> dict:
    return {"requests": requests, **({"limits": limits} if limits else {})}


@pytest.mark.parametrize(
    ("spec", "causes"),
    [
        pytest.param(
            {
                "containers": [
                    {"name": "c", "image": "i", "resources": _resources({"cpu": "2"}, {"cpu": "1"})}
                ]
            },
            [
                (
                    "spec.containers[0].resources.requests",
                    'Invalid value: "2": must be less than or equal to cpu limit of 1',
                )
            ],
            id="a request over its limit",
        ),
        pytest.param(
            {"containers": [{"name": "c", "image": "i", "resources": _resources({"bogus": "1"})}]},
            [
                (
                    "spec.containers[0].resources.requests[bogus]",
                    'Invalid value: "bogus": must be a standard resource type or fully qualified',
                ),
                (
                    "spec.containers[0].resources.requests[bogus]",
                    'Invalid value: "bogus": must be a standard resource for containers',
                ),
            ],
            id="an unknown resource",
        ),
        pytest.param(
            {
                "containers": [
                    {"name": "c", "image": "i", "resources": _resources({"example.com/gpu": "1"})}
                ]
            },
            [
                (
                    "spec.containers[0].resources.limits",
                    "Required value: Limit must be set for non overcommitable resources",
                )
            ],
            id="an extended resource without a limit",
        ),
        pytest.param(
            {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "resources": _resources({"example.com/gpu": "1"}, {"example.com/gpu": "2"}),
                    }
                ]
            },
            [
                (
                    "spec.containers[0].resources.requests",
                    'Invalid value: "1": must be equal to example.com/gpu limit of 2',
                )
            ],
            id="an extended resource below its limit",
        ),
        pytest.param(
            {"containers": [{"name": "c", "image": "i"}, {"name": "a.b", "image": "i"}]},
            [("spec.containers[1].name", 'Invalid value: "a.b": must not contain dots')],
            id="a container name with dots",
        ),
        pytest.param(
            {"containers": [{"name": "c", "image": "i"}], "activeDeadlineSeconds": 0},
            [
                (
                    "spec.activeDeadlineSeconds",
                    "Invalid value: 0: must be between 1 and 2147483647, inclusive",
                )
            ],
            id="a zero deadline",
        ),
        pytest.param(
            {
                "containers": [{"name": "c", "image": "i"}],
                "tolerations": [{"operator": "Equal", "value": "v"}],
            },
            [
                (
                    "spec.tolerations[0].operator",
                    'Invalid value: "Equal": operator must be Exists when `key` is empty, which '
                    'means "match all values and all keys"',
                )
            ],
            id="a toleration without a key",
        ),
    ],
)
async def test_pod_spec_is_validated(cluster, spec, causes):
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec},
        check=False,
    )

    assert (answer.status, answer.body["reason"]) == (422, "Invalid")
    assert [(c["field"], c["message"]) for c in answer.body["details"]["causes"]] == causes


async def test_a_negative_grace_period_becomes_one_second(cluster):
    pod = await cluster.create_pod("p", termination_grace_period_seconds=-5)

    assert pod["spec"]["terminationGracePeriodSeconds"] == 1


async def test_a_forbidden_spec_change_names_the_fields_that_may_change(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")

    answer = await rest.request(
        "PATCH",
        pods_path(ns, "p"),
        body={"spec": {"restartPolicy": "Never"}},
        content_type="application/merge-patch+json",
        check=False,
    )

    [cause] = answer.body["details"]["causes"]
    # Go appends a diff of the two specs on a line of its own; the simulator does not
    assert (answer.status, cause["field"], cause["message"].split("\n", 1)[0]) == (
        422,
        "spec",
        "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to "
        "be set to 1 if it was previously negative)",
    )


@pytest.mark.parametrize(
    "value",
    [pytest.param("12x", id="not a quantity"), pytest.param("1e18Ki", id="exponent and suffix")],
)
async def test_a_bad_quantity_fails_decoding_and_names_no_field(cluster, value):
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body={
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [_container("c", {"memory": value})]},
        },
        check=False,
    )

    # Quantity.UnmarshalJSON's error, without the field (v1.37 decodes with sigs.k8s.io/json)
    assert (answer.status, answer.body["reason"], answer.body["message"]) == (
        400,
        "BadRequest",
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular '
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    )
