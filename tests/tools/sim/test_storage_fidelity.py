"""The simulator's storage validation against the genuine kube-apiserver v1.37.2: the same
bodies get the same 422 causes from both backends (parametrized over ``cluster``).

Only bodies whose answer does not depend on the simulator's deliberate differences are here
(see ``asched/tools/sim/apiserver/volume_kinds.py``). Objects a case creates have unique names and are deleted.
v1.37 folds identical causes into one (v1.20 listed the CSINode and CSIDriver ones twice) and
appends the declarative errors (a StorageClass's required provisioner, its immutable fields)
after the handwritten ones.
"""

from __future__ import annotations

from typing import Any

import pytest

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
IMMUTABLE_CLAIM = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)
#: a class no test creates: the claim stays unbound on both backends (no PV, no default class)
_GOOD_CLAIM_SPEC: dict[str, Any] = {
    "accessModes": ["ReadWriteOnce"],
    "resources": {"requests": {"storage": "1Gi"}},
    "storageClassName": "asched-fidelity-unbound",
}
NAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
PVS = "/api/v1/persistentvolumes"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
CSI_NODES = "/apis/storage.k8s.io/v1/csinodes"
#: the test's namespace is filled in (as for "claims")
CAPACITIES = "/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities"
_GOOD_PV_SPEC: dict[str, Any] = {
    "capacity": {"storage": "1Gi"},
    "accessModes": ["ReadWriteOnce"],
    "hostPath": {"path": "/data"},
}


def _causes(answer: Any) -> list[tuple[str, str]]:
    assert (answer.status, answer.body.get("reason")) == (422, "Invalid"), answer.body
    return [(c["field"], c["message"]) for c in answer.body["details"]["causes"]]


@pytest.mark.parametrize(
    ("collection", "body", "expected"),
    [
        pytest.param(
            PVS,
            {"spec": {}},
            [
                ("spec.accessModes", "Required value"),
                ("spec.capacity", "Required value"),
                # the map as JSON (v1.20: Go's %#v, core.ResourceList(nil))
                ("spec.capacity", 'Unsupported value: null: supported values: "storage"'),
                ("spec", "Required value: must specify a volume type"),
            ],
            id="PV without capacity, modes or source",
        ),
        pytest.param(
            PVS,
            {
                "spec": {
                    **_GOOD_PV_SPEC,
                    "capacity": {"storage": "-1Gi"},
                    "hostPath": None,
                    "local": {"path": "/y"},
                    "persistentVolumeReclaimPolicy": "Z",
                    "volumeMode": "X",
                    "storageClassName": "Bad_Name",
                }
            },
            [
                # -1Gi = -(1024^3) = -1073741824
                (
                    "spec.capacity[storage]",
                    "Invalid value: -1073741824: must be a valid resource quantity",
                ),
                ("spec.capacity[storage]", 'Invalid value: "-1Gi": must be greater than zero'),
                (
                    "spec.persistentVolumeReclaimPolicy",
                    'Unsupported value: "Z": supported values: "Delete", "Recycle", "Retain"',
                ),
                ("spec.nodeAffinity", "Required value: Local volume requires node affinity"),
                ("spec.storageClassName", f'Invalid value: "Bad_Name": {SUBDOMAIN}'),
                (
                    "spec.volumeMode",
                    'Unsupported value: "X": supported values: "Block", "Filesystem"',
                ),
            ],
            id="PV negative capacity, local without affinity, enums, class name",
        ),
        pytest.param(
            PVS,
            {
                "spec": {
                    **_GOOD_PV_SPEC,
                    "hostPath": None,
                    "csi": {},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": []}},
                }
            },
            [
                (
                    "spec.nodeAffinity.required.nodeSelectorTerms",
                    "Required value: must have at least one node selector term",
                ),
                ("spec.csi.driver", "Required value"),  # only (v1.20: also not a subdomain)
                ("spec.csi.volumeHandle", "Required value"),
            ],
            id="PV without node selector terms, empty csi source",
        ),
        pytest.param(
            PVS,
            {"spec": {**_GOOD_PV_SPEC, "nfs": {"server": "s", "path": "/p"}, "nodeAffinity": {}}},
            [
                (
                    "spec.nodeAffinity.required",
                    "Required value: must specify required node constraints",
                ),
                ("spec.nfs", "Forbidden: may not specify more than 1 volume type"),
            ],
            id="PV two sources, affinity without required",
        ),
        pytest.param(
            "claims",
            {"spec": {}},
            [
                ("spec.accessModes", "Required value: at least 1 access mode is required"),
                ("spec.resources[storage]", "Required value"),
            ],
            id="claim without modes or request",
        ),
        pytest.param(
            "claims",
            {
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "0"}},
                    "volumeMode": "Y",
                    "storageClassName": "B_b",
                    "selector": {"matchExpressions": [{"key": "a", "operator": "Foo"}]},
                }
            },
            [
                (
                    "spec.selector.matchExpressions[0].operator",
                    'Invalid value: "Foo": not a valid selector operator',
                ),
                ("spec.resources[storage]", 'Invalid value: "0": must be greater than zero'),
                ("spec.storageClassName", f'Invalid value: "B_b": {SUBDOMAIN}'),
                (
                    "spec.volumeMode",
                    'Unsupported value: "Y": supported values: "Block", "Filesystem"',
                ),
            ],
            id="claim selector, zero request, class, volume mode",
        ),
        pytest.param(
            CLASSES,
            {"volumeBindingMode": "Bogus", "reclaimPolicy": "Recycle", "parameters": {"": "x"}},
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
                ("provisioner", "Required value"),  # declarative: last
            ],
            id="class without provisioner, bad enums and parameter",
        ),
        pytest.param(
            CLASSES,
            {
                "provisioner": "a.b",
                "allowedTopologies": [
                    {},
                    {
                        "matchLabelExpressions": [
                            {"key": "", "values": []},
                            {"key": "bad key!", "values": ["a", "a"]},
                            {"key": "z", "values": ["v"]},
                            {"key": "z", "values": ["w"]},
                        ]
                    },
                ],
            },
            [
                # the empty term equals the 2 nil maps Go compares it with first (a quirk): two
                # identical causes, folded into one
                ("allowedTopologies[0].matchLabelExpressions", 'Duplicate value: ""'),
                ("allowedTopologies[1].matchLabelExpressions[0].values", "Required value"),
                (
                    "allowedTopologies[1].matchLabelExpressions[0].key",
                    'Invalid value: "": name part must be non-empty',
                ),
                ("allowedTopologies[1].matchLabelExpressions[0].key", f'Invalid value: "": {NAME}'),
                ("allowedTopologies[1].matchLabelExpressions[1].values[1]", 'Duplicate value: "a"'),
                (
                    "allowedTopologies[1].matchLabelExpressions[1].key",
                    f'Invalid value: "bad key!": {NAME}',
                ),
                ("allowedTopologies[1].matchLabelExpressions[3].key", 'Duplicate value: "z"'),
            ],
            id="class allowed topologies",
        ),
        pytest.param(
            "/apis/storage.k8s.io/v1/csidrivers",
            {
                "metadata": {"name": "Bad_Driver"},
                "spec": {"volumeLifecycleModes": ["Nope"], "fsGroupPolicy": "X"},
            },
            [
                ("metadata.name", f'Invalid value: "Bad_Driver": {SUBDOMAIN}'),
                (
                    "spec.fsGroupPolicy",
                    'Unsupported value: "X": supported values: "File", "None", '
                    '"ReadWriteOnceWithFSType"',
                ),
                (
                    "spec.volumeLifecycleModes",
                    'Unsupported value: "Nope": supported values: "Persistent", "Ephemeral"',
                ),
            ],
            id="CSIDriver bad name and enums",
        ),
        pytest.param(
            CSI_NODES,
            {
                "spec": {
                    "drivers": [
                        {"name": "a.b", "nodeID": "x", "allocatable": {"count": -1}},
                        {"name": "a.b", "nodeID": "y"},
                    ]
                }
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
            CSI_NODES,
            {"spec": {"drivers": [{"name": "", "nodeID": ""}]}},
            [
                ("spec.drivers[0].name", "Required value"),
                ("spec.drivers[0].nodeID", "Required value"),
            ],
            id="CSINode driver without name or node ID",
        ),
        pytest.param(
            CSI_NODES,
            {
                "spec": {
                    "drivers": [
                        {"name": "a.b", "nodeID": "x", "topologyKeys": ["", "bad key!", "k", "k"]}
                    ]
                }
            },
            # Go reports each key on the driver's path
            [
                ("spec.drivers[0]", "Required value"),
                ("spec.drivers[0]", 'Invalid value: "": name part must be non-empty'),
                ("spec.drivers[0]", f'Invalid value: "": {NAME}'),
                ("spec.drivers[0]", f'Invalid value: "bad key!": {NAME}'),
                ("spec.drivers[0]", 'Duplicate value: "k"'),
            ],
            id="CSINode topology keys",
        ),
        pytest.param(
            PVS,
            {"spec": {**_GOOD_PV_SPEC, "capacity": {"storage": "1Gi", "cpu": "1"}}},
            [
                (
                    "spec.capacity",
                    'Unsupported value: {"cpu":"1","storage":"1Gi"}: supported values: "storage"',
                )
            ],
            id="PV capacity beside storage",
        ),
        pytest.param(
            "claims",
            {"spec": {**_GOOD_CLAIM_SPEC, "accessModes": ["ReadWriteOncePod", "ReadWriteOnce"]}},
            [
                (
                    "spec.accessModes",
                    "Forbidden: may not use ReadWriteOncePod with other access modes",
                )
            ],
            id="claim ReadWriteOncePod with another mode",
        ),
        pytest.param(
            CAPACITIES,
            {
                "storageClassName": "Bad_Class",
                "capacity": "-1",
                "maximumVolumeSize": "-2",
                "nodeTopology": {
                    "matchExpressions": [{"key": "a", "operator": "In", "values": ["x y"]}]
                },
            },
            # maximumVolumeSize is not checked
            [
                (
                    "nodeTopology.matchExpressions[0].values[0]",
                    'Invalid value: "x y": a valid label must be an empty string or consist of '
                    "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
                    "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                ),
                ("storageClassName", f'Invalid value: "Bad_Class": {SUBDOMAIN}'),
                ("capacity", 'Invalid value: "-1": must be greater than or equal to 0'),
            ],
            id="capacity class, topology and sizes",
        ),
    ],
)
async def test_same_causes_as_the_genuine_server(cluster, collection, body, expected):
    if collection == "claims":
        collection = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims"
    collection = collection.format(ns=cluster.namespace)
    spec = body.get("spec")
    if isinstance(spec, dict):  # a None source means "leave this one out"
        body = {**body, "spec": {k: v for k, v in spec.items() if v is not None}}
    named = {"metadata": {"name": cluster.unique_name("st")}, **body}  # unless the body names it
    answer = await cluster.rest.request("POST", collection, body=named, check=False)
    assert _causes(answer) == expected


@pytest.mark.parametrize(
    ("collection", "body", "change", "expected"),
    [
        pytest.param(
            PVS,
            {"spec": _GOOD_PV_SPEC},
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
            {"provisioner": "a.b", "volumeBindingMode": "WaitForFirstConsumer"},
            {"volumeBindingMode": "Immediate", "provisioner": "c.d", "parameters": {"a": "b"}},
            # declarative validation's errors, in the struct's order, without the value
            [
                ("provisioner", "Invalid value: null: field is immutable"),
                ("parameters", "Invalid value: null: field is immutable"),
                ("volumeBindingMode", "Invalid value: null: field is immutable"),
            ],
            id="class parameters, provisioner, binding mode",
        ),
        pytest.param(
            "claims",
            {"spec": {**_GOOD_CLAIM_SPEC, "volumeName": "pv1"}},
            {"spec": {"volumeName": "pv2", "accessModes": ["ReadWriteMany"]}},
            [("spec", f"Forbidden: {IMMUTABLE_CLAIM}")],
            id="claim volume name once set, access modes",
        ),
        pytest.param(
            "claims",
            {"spec": _GOOD_CLAIM_SPEC},
            {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
            [("spec", f"Forbidden: {IMMUTABLE_CLAIM}")],
            id="request of an unbound claim",
        ),
        pytest.param(
            CSI_NODES,
            {"spec": {"drivers": [{"name": "a.b", "nodeID": "x"}]}},
            {"spec": {"drivers": [{"name": "a.b", "nodeID": "x", "allocatable": {"count": -2}}]}},
            # the count may change since v1.35 (MutableCSINodeAllocatableCount); not below 0
            [
                (
                    "spec.drivers[0].allocatable.count",
                    "Invalid value: -2: must be greater than or equal to 0",
                ),
            ],
            id="CSINode driver count changed",
        ),
        pytest.param(
            CSI_NODES,
            {"spec": {"drivers": [{"name": "a.b", "nodeID": "x"}]}},
            {"spec": {"drivers": [{"name": "a.b", "nodeID": "y", "topologyKeys": ["k"]}]}},
            [
                (
                    "spec.drivers",
                    'Invalid value: {"Name":"a.b","NodeID":"y","TopologyKeys":["k"],'
                    '"Allocatable":null}: field is immutable',
                ),
            ],
            id="CSINode driver changed",
        ),
        pytest.param(
            "/apis/storage.k8s.io/v1/csidrivers",
            {"spec": {}},
            {
                "spec": {
                    "attachRequired": False,
                    "volumeLifecycleModes": ["Ephemeral"],
                    "podInfoOnMount": True,
                }
            },
            # sic: Go's path of attachRequired; podInfoOnMount may change
            [
                ("spec.attachedRequired", "Invalid value: false: field is immutable"),
                ("spec.volumeLifecycleModes", 'Invalid value: ["Ephemeral"]: field is immutable'),
            ],
            id="CSIDriver attachRequired and lifecycle modes",
        ),
        pytest.param(
            CAPACITIES,
            {"storageClassName": "a", "nodeTopology": {"matchLabels": {"z": "1"}}},
            {"storageClassName": "b", "nodeTopology": {"matchLabels": {"z": "2"}}},
            [
                ("nodeTopology", 'Invalid value: {"matchLabels":{"z":"2"}}: field is immutable'),
                ("storageClassName", 'Invalid value: "b": field is immutable'),
            ],
            id="capacity class and topology",
        ),
    ],
)
async def test_same_immutability_as_the_genuine_server(cluster, collection, body, change, expected):
    if collection == "claims":
        collection = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims"
    collection = collection.format(ns=cluster.namespace)
    name = cluster.unique_name("st")
    await cluster.rest.request("POST", collection, body={"metadata": {"name": name}, **body})
    try:
        answer = await cluster.rest.request(
            "PATCH",
            f"{collection}/{name}",
            body=change,
            content_type="application/merge-patch+json",
            check=False,
        )
        # Go appends a diff to the first message; the simulator does not (see volume_kinds)
        found = [(f, m.split("\n", 1)[0]) for f, m in _causes(answer)]
        assert found == expected
    finally:
        await cluster.rest.request("DELETE", f"{collection}/{name}", check=False)
