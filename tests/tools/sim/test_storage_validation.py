"""The storage kinds' 422s over HTTP: each field cause as kube-apiserver v1.37.2 answered the
same body (recorded against the genuine server; tests/tools/sim/test_storage_fidelity.py checks many
on both backends), plus the DefaultStorageClass admission plugin."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .conftest import Api
from .storage import (
    CLAIMS,
    CLASSES,
    CSI_NODES,
    PVS,
    claim,
    create,
    storage_class,
    volume,
    wait_until,
)

CAPACITIES = "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities"
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_AFFINITY_BAD_OPERATOR = {
    "required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Foo"}]}]}
}


def _causes(reply: Any) -> list[tuple[str, str]]:
    assert (reply.status, reply.reason) == (422, "Invalid"), reply.body
    return [(cause["field"], cause["message"]) for cause in reply.body["details"]["causes"]]


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        pytest.param(
            PVS,
            {"metadata": {"name": "a"}, "spec": {}},
            [
                ("spec.accessModes", "Required value"),
                ("spec.capacity", "Required value"),
                ("spec.capacity", 'Unsupported value: null: supported values: "storage"'),
                ("spec", "Required value: must specify a volume type"),
            ],
            id="PV without capacity, modes or source",
        ),
        pytest.param(
            PVS,
            volume(
                "a",
                accessModes=["Bogus"],
                local={"path": "/y"},
                volumeMode="X",
                persistentVolumeReclaimPolicy="Z",
                storageClassName="Bad_Name",
                nodeAffinity={},
            ),
            [
                (
                    "spec.accessModes",
                    'Unsupported value: "Bogus": supported values: "ReadOnlyMany", '
                    '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
                ),
                (
                    "spec.persistentVolumeReclaimPolicy",
                    'Unsupported value: "Z": supported values: "Delete", "Recycle", "Retain"',
                ),
                (
                    "spec.nodeAffinity.required",
                    "Required value: must specify required node constraints",
                ),
                ("spec.local", "Forbidden: may not specify more than 1 volume type"),
                ("spec.storageClassName", f'Invalid value: "Bad_Name": {SUBDOMAIN}'),
                (
                    "spec.volumeMode",
                    'Unsupported value: "X": supported values: "Block", "Filesystem"',
                ),
            ],
            id="PV enums, two sources, empty node affinity",
        ),
        pytest.param(
            PVS,
            {
                "metadata": {"name": "a"},
                "spec": {
                    "capacity": {"storage": "-1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "local": {"path": "/y"},
                },
            },
            [
                # -1Gi = -1024^3 = -1073741824
                (
                    "spec.capacity[storage]",
                    "Invalid value: -1073741824: must be a valid resource quantity",
                ),
                ("spec.capacity[storage]", 'Invalid value: "-1Gi": must be greater than zero'),
                ("spec.nodeAffinity", "Required value: Local volume requires node affinity"),
            ],
            id="PV negative capacity, local without node affinity",
        ),
        pytest.param(
            PVS,
            volume("a", nodeAffinity=_AFFINITY_BAD_OPERATOR),
            [
                (
                    "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator",
                    'Invalid value: "Foo": not a valid selector operator',
                )
            ],
            id="PV node affinity with a bad operator",
        ),
        pytest.param(
            PVS,
            {
                "metadata": {"name": "a"},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "csi": {},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": []}},
                },
            },
            [
                (
                    "spec.nodeAffinity.required.nodeSelectorTerms",
                    "Required value: must have at least one node selector term",
                ),
                ("spec.csi.driver", "Required value"),
                ("spec.csi.volumeHandle", "Required value"),
            ],
            id="PV no node selector terms, empty csi source",
        ),
        pytest.param(
            CLAIMS,
            {"metadata": {"name": "c"}, "spec": {}},
            [
                ("spec.accessModes", "Required value: at least 1 access mode is required"),
                ("spec.resources[storage]", "Required value"),
            ],
            id="claim without modes or request",
        ),
        pytest.param(
            CLAIMS,
            claim(
                "c",
                "0",
                modes=("X",),
                volumeMode="Y",
                storageClassName="B_b",
                selector={"matchExpressions": [{"key": "a", "operator": "Foo"}]},
            ),
            [
                (
                    "spec.selector.matchExpressions[0].operator",
                    'Invalid value: "Foo": not a valid selector operator',
                ),
                (
                    "spec.accessModes",
                    'Unsupported value: "X": supported values: "ReadOnlyMany", '
                    '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
                ),
                ("spec.resources[storage]", 'Invalid value: "0": must be greater than zero'),
                ("spec.storageClassName", f'Invalid value: "B_b": {SUBDOMAIN}'),
                (
                    "spec.volumeMode",
                    'Unsupported value: "Y": supported values: "Block", "Filesystem"',
                ),
            ],
            id="claim selector, modes, zero request, class, volume mode",
        ),
        pytest.param(
            CLASSES,
            {
                "metadata": {"name": "s"},
                "volumeBindingMode": "Bogus",
                "reclaimPolicy": "Recycle",
                "parameters": {"": "x"},
            },
            [
                ("parameters", 'Invalid value: "": field can not be empty.'),
                (
                    "reclaimPolicy",
                    'Unsupported value: "Recycle": supported values: "Delete", "Retain"',
                ),
                (
                    "volumeBindingMode",
                    'Unsupported value: "Bogus": supported values: "Immediate", '
                    '"WaitForFirstConsumer"',
                ),
                ("provisioner", "Required value"),  # a declarative error: after the others
            ],
            id="class without provisioner, bad enums and parameter",
        ),
        pytest.param(
            CSI_NODES,
            {
                "metadata": {"name": "n"},
                "spec": {
                    "drivers": [
                        {"name": "a.b", "nodeID": "x", "allocatable": {"count": -1}},
                        {"name": "a.b", "nodeID": "y"},
                    ]
                },
            },
            [
                (
                    "spec.drivers[0].allocatable.count",
                    "Invalid value: -1: must be greater than or equal to 0",
                ),
                ("spec.drivers[1].name", 'Duplicate value: "a.b"'),
            ],
            id="CSINode negative count, duplicate driver",
        ),
        pytest.param(
            CAPACITIES,
            {
                "metadata": {"name": "cap"},
                "storageClassName": "",
                "nodeTopology": {"matchExpressions": [{"key": "k", "operator": "In"}]},
                "capacity": "-1Gi",
            },
            [
                (
                    "nodeTopology.matchExpressions[0].values",
                    "Required value: must be specified when `operator` is 'In' or 'NotIn'",
                ),
                ("storageClassName", f'Invalid value: "": {SUBDOMAIN}'),
                ("capacity", 'Invalid value: "-1Gi": must be greater than or equal to 0'),
            ],
            id="capacity without class, bad topology, negative",
        ),
    ],
)
async def test_invalid_storage_objects(api: Api, path, body, expected):
    assert _causes(await api.post(path, body)) == expected


@pytest.mark.parametrize(
    ("path", "body", "change", "expected"),
    [
        pytest.param(
            CLAIMS,
            claim("c"),
            {"spec": {"accessModes": ["ReadWriteMany"]}},
            [
                (
                    "spec",
                    "Forbidden: spec is immutable after creation except resources.requests "
                    "and volumeAttributesClassName for bound claims",
                )
            ],
            id="claim access modes",
        ),
        pytest.param(
            CLAIMS,
            claim("c"),
            {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
            [
                (
                    "spec",
                    "Forbidden: spec is immutable after creation except resources.requests "
                    "and volumeAttributesClassName for bound claims",
                )
            ],
            id="request of an unbound claim",
        ),
        pytest.param(
            CLAIMS,
            claim("c", volumeName="pv1"),
            {"spec": {"volumeName": "pv2"}},
            [
                (
                    "spec",
                    "Forbidden: spec is immutable after creation except resources.requests "
                    "and volumeAttributesClassName for bound claims",
                )
            ],
            id="claim volume name once set",
        ),
        pytest.param(
            PVS,
            volume("pv1"),
            {"spec": {"hostPath": {"path": "/z"}, "volumeMode": "Block"}},
            [
                (
                    "spec.persistentvolumesource",
                    "Forbidden: spec.persistentvolumesource is immutable after creation",
                ),
                ("volumeMode", 'Invalid value: "Block": field is immutable'),
            ],
            id="PV source and volume mode",
        ),
        pytest.param(
            CLASSES,
            storage_class("s", "a.b", wait=True),
            {"volumeBindingMode": "Immediate", "provisioner": "c.d", "parameters": {"a": "b"}},
            [
                ("provisioner", "Invalid value: null: field is immutable"),
                ("parameters", "Invalid value: null: field is immutable"),
                ("volumeBindingMode", "Invalid value: null: field is immutable"),
            ],
            id="class parameters, provisioner, binding mode",
        ),
        pytest.param(
            CAPACITIES,
            {"metadata": {"name": "cap"}, "storageClassName": "a", "capacity": "1Gi"},
            {"storageClassName": "b"},
            [("storageClassName", 'Invalid value: "b": field is immutable')],
            id="capacity class",
        ),
        pytest.param(
            CAPACITIES,
            {"metadata": {"name": "cap"}, "storageClassName": "a", "nodeTopology": {}},
            {"nodeTopology": {"matchLabels": {"zone": "z1"}}},
            [("nodeTopology", 'Invalid value: {"matchLabels":{"zone":"z1"}}: field is immutable')],
            id="capacity topology",
        ),
    ],
)
async def test_immutable_storage_fields(api: Api, path, body, change, expected):
    created = await create(api, path, copy.deepcopy(body))
    reply = await api.patch(f"{path}/{created['metadata']['name']}", change)
    assert _causes(reply) == expected


@pytest.mark.parametrize(
    ("change", "status"),
    [
        pytest.param({"spec": {"volumeName": "pv1"}}, 200, id="binding sets the volume name"),
        pytest.param(
            {"spec": {"persistentVolumeReclaimPolicy": "Delete"}}, 422, id="not a claim field"
        ),
    ],
)
async def test_claim_binding_update(api: Api, change, status):
    await create(api, CLAIMS, claim("c"))
    reply = await api.patch(f"{CLAIMS}/c", change)
    assert reply.status == status, reply.body


async def test_bound_claim_may_grow_but_not_shrink(api: Api):
    await create(api, PVS, volume("pv1", "5Gi"))
    await create(api, CLAIMS, claim("c", "2Gi", storage_class=""))
    await wait_until(api, CLAIMS, "c", lambda o: o["status"].get("phase") == "Bound")
    grown = await api.patch(
        f"{CLAIMS}/c", {"spec": {"resources": {"requests": {"storage": "3Gi"}}}}
    )
    assert grown.status == 200, grown.body
    shrunk = await api.patch(
        f"{CLAIMS}/c", {"spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    )
    assert _causes(shrunk) == [
        ("spec.resources.requests.storage", "Forbidden: field can not be less than previous value")
    ]


@pytest.mark.parametrize(
    ("defaults", "explicit", "expected"),
    [
        pytest.param([], None, None, id="no default class: left unset"),
        pytest.param(["gold"], None, "gold", id="the one default class"),
        pytest.param(["gold"], "", "", id="an explicit empty class is kept"),
        pytest.param(["gold"], "silver", "silver", id="an explicit class is kept"),
    ],
)
async def test_default_storage_class_admission(api: Api, defaults, explicit, expected):
    for name in ("gold", "silver"):
        body = storage_class(name, "a.b")
        if name in defaults:
            body["metadata"]["annotations"] = {
                "storageclass.kubernetes.io/is-default-class": "true"
            }
        await create(api, CLASSES, body)
    made = await create(api, CLAIMS, claim("c", storage_class=explicit))
    assert made["spec"].get("storageClassName") == expected


async def test_two_default_classes_refuse_a_claim_without_class(api: Api):
    for name, key in (
        ("d1", "storageclass.kubernetes.io/is-default-class"),
        ("d2", "storageclass.beta.kubernetes.io/is-default-class"),
    ):
        body = storage_class(name, "a.b")
        body["metadata"]["annotations"] = {key: "true"}
        await create(api, CLASSES, body)
    reply = await api.post(CLAIMS, claim("c4"))
    assert (reply.status, reply.reason, reply.message) == (
        403,
        "Forbidden",
        'persistentvolumeclaims "c4" is forbidden: Internal error occurred: '
        "2 default StorageClasses were found",
    )


async def test_claim_ref_of_the_wrong_type_fails_decoding(api: Api):
    reply = await api.post(PVS, volume("a", claimRef={"name": 5}))
    assert (reply.status, reply.reason) == (400, "BadRequest")
    assert "spec.claimRef.name" in (reply.message or "")
