"""The three patch formats, table-driven (each case: document, patch, expected result)."""

from __future__ import annotations

import pytest

from asched.tools.sim.apiserver.patch import (
    MergeList,
    PatchError,
    Struct,
    json_patch,
    merge_patch,
    strategic_merge,
)
from asched.tools.sim.apiserver.resources import BY_GVR

POD_SCHEMA = BY_GVR[("", "v1", "pods")].schema


@pytest.mark.parametrize(
    ("doc", "patch", "expected"),
    [
        pytest.param({"a": 1}, {"b": 2}, {"a": 1, "b": 2}, id="adds a key"),
        pytest.param({"a": 1, "b": 2}, {"a": None}, {"b": 2}, id="null deletes"),
        pytest.param(
            {"a": {"x": 1, "y": 2}}, {"a": {"y": 3}}, {"a": {"x": 1, "y": 3}}, id="objects merge"
        ),
        pytest.param({"a": [1, 2]}, {"a": [3]}, {"a": [3]}, id="lists are replaced"),
        pytest.param({"a": 1}, {"a": {"b": None}}, {"a": {}}, id="scalar replaced by an object"),
    ],
)
def test_merge_patch(doc, patch, expected):
    assert merge_patch(doc, patch) == expected


@pytest.mark.parametrize(
    ("doc", "ops", "expected"),
    [
        pytest.param(
            {"a": 1}, [{"op": "add", "path": "/b", "value": 2}], {"a": 1, "b": 2}, id="add"
        ),
        pytest.param(
            {"a": [1, 3]},
            [{"op": "add", "path": "/a/1", "value": 2}],
            {"a": [1, 2, 3]},
            id="add into a list",
        ),
        pytest.param(
            {"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}], {"a": [1, 2]}, id="append"
        ),
        pytest.param({"a": 1, "b": 2}, [{"op": "remove", "path": "/a"}], {"b": 2}, id="remove"),
        pytest.param(
            {"a": 1}, [{"op": "replace", "path": "/a", "value": 5}], {"a": 5}, id="replace"
        ),
        pytest.param({"a": 1}, [{"op": "move", "from": "/a", "path": "/b"}], {"b": 1}, id="move"),
        pytest.param(
            {"a": {"x": 1}},
            [{"op": "copy", "from": "/a", "path": "/b"}],
            {"a": {"x": 1}, "b": {"x": 1}},
            id="copy",
        ),
        pytest.param(
            {"a/b": 1},
            [{"op": "replace", "path": "/a~1b", "value": 2}],
            {"a/b": 2},
            id="escaped pointer",
        ),
        pytest.param(
            {"a": 1},
            [{"op": "test", "path": "/a", "value": 1}, {"op": "remove", "path": "/a"}],
            {},
            id="test passes",
        ),
    ],
)
def test_json_patch(doc, ops, expected):
    assert json_patch(doc, ops) == expected


@pytest.mark.parametrize(
    ("doc", "ops", "malformed"),
    [
        pytest.param({"a": 1}, {"op": "add"}, True, id="not a list"),
        pytest.param({"a": 1}, [{"op": "test", "path": "/a", "value": 2}], False, id="test fails"),
        pytest.param(
            {"a": 1},
            [{"op": "replace", "path": "/b", "value": 2}],
            False,
            id="replace of a missing key",
        ),
        pytest.param({"a": 1}, [{"op": "remove", "path": "/x/y"}], False, id="missing parent"),
        pytest.param(
            {"a": [1]}, [{"op": "add", "path": "/a/5", "value": 2}], False, id="index out of range"
        ),
    ],
)
def test_json_patch_errors(doc, ops, malformed):
    with pytest.raises(PatchError) as caught:
        json_patch(doc, ops)
    assert caught.value.malformed is malformed


def _conditions(*types: str) -> dict:
    return {"status": {"conditions": [{"type": t, "status": "False"} for t in types]}}


@pytest.mark.parametrize(
    ("doc", "patch", "expected"),
    [
        # Conditions merge by type. Order as Go's normalizeElementOrder: a new item from the
        # patch goes first, unless a server-only item preceded it in the original.
        pytest.param(
            _conditions("PodScheduled"),
            {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"type": "PodScheduled", "status": "False"},
                    ]
                }
            },
            id="conditions: a new type is added",
        ),
        pytest.param(
            _conditions("Ready", "PodScheduled"),
            {
                "status": {
                    "conditions": [{"type": "PodScheduled", "status": "True", "reason": None}]
                }
            },
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "False"},
                        {"type": "PodScheduled", "status": "True"},
                    ]
                }
            },
            id="conditions: an existing type is merged in place",
        ),
        pytest.param(
            _conditions("Ready", "PodScheduled"),
            {"status": {"conditions": [{"type": "Ready", "$patch": "delete"}]}},
            _conditions("PodScheduled"),
            id="conditions: $patch delete",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]
                }
            },
            {"spec": {"containers": [{"name": "b", "image": "y:2"}]}},
            {
                "spec": {
                    "containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:2"}]
                }
            },
            id="containers merge by name",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "a", "image": "x"}], "tolerations": [{"key": "k"}]}},
            {"spec": {"tolerations": [{"key": "j"}]}},
            {"spec": {"containers": [{"name": "a", "image": "x"}], "tolerations": [{"key": "j"}]}},
            id="a list without a merge key is replaced",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["a.io/x"]}},
            {"metadata": {"finalizers": ["b.io/y", "a.io/x"]}},
            {"metadata": {"finalizers": ["b.io/y", "a.io/x"]}},
            id="finalizers merge as a set",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["a.io/x", "b.io/y"]}},
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.io/x"]}},
            {"metadata": {"finalizers": ["b.io/y"]}},
            id="$deleteFromPrimitiveList",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}},
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                    "containers": [{"name": "a", "image": "z"}],
                }
            },
            {"spec": {"containers": [{"name": "b", "image": "y"}, {"name": "a", "image": "z"}]}},
            id="$setElementOrder reorders",
        ),
        pytest.param(
            {"metadata": {"labels": {"a": "1", "b": "2"}}},
            {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
            {"metadata": {"labels": {"c": "3"}}},
            id="$patch replace on a map",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "a", "image": "x"}]}},
            {"spec": {"containers": [{"name": "b", "image": "y"}, {"$patch": "replace"}]}},
            {"spec": {"containers": [{"name": "b", "image": "y"}]}},
            id="$patch replace on a list",
        ),
    ],
)
def test_strategic_merge_patch(doc, patch, expected):
    assert strategic_merge(doc, patch, POD_SCHEMA) == expected


def test_strategic_merge_rejects_an_item_without_its_merge_key():
    schema = Struct({"items": MergeList("name")})
    with pytest.raises(PatchError):
        strategic_merge({"items": []}, {"items": [{"image": "x"}]}, schema)


def test_patches_do_not_mutate_their_inputs():
    doc = {"spec": {"containers": [{"name": "a", "image": "x"}]}}
    patch = {"spec": {"containers": [{"name": "a", "image": "y"}]}}
    strategic_merge(doc, patch, POD_SCHEMA)
    merge_patch(doc, {"spec": None})
    assert doc == {"spec": {"containers": [{"name": "a", "image": "x"}]}}
