"""Annotations and owner references at the decoding boundary (issue 30).

Annotations are decoded only when asked (``keep_annotations``: some enabled plugin
declares ``reads_annotations``), checked as labels are (a map of string to string, an
error naming ``metadata.annotations[KEY]``); owner references are always decoded and
checked field by field. The per-shape decoder reads both per pod, as a full decode does.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.pod_shapes import PodShapes
from asched.cluster.records import OwnerReference
from asched.errors import DecodeError
from asched.tools.bench import templates

Raw = dict[str, Any]
MAINTENANCE = "example.com/maintenance"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
OWNER: Raw = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "web-7d9f",
    "uid": "rs-1",
    "controller": True,
    "blockOwnerDeletion": True,
}


def _pod(name: str = "web", **meta: Any) -> Raw:
    raw = copy.deepcopy(templates.pod(name))
    raw["metadata"].update(meta)
    return raw


def _node(name: str = "n1", **meta: Any) -> Raw:
    raw = copy.deepcopy(templates.node(name))
    raw["metadata"].update(meta)
    return raw


@pytest.mark.parametrize(
    ("annotations", "keep", "expected"),
    [
        pytest.param(
            {MAINTENANCE: "true", LAST_APPLIED: "{}" * 10_000},
            True,
            {MAINTENANCE: "true", LAST_APPLIED: "{}" * 10_000},
            id="kept",
        ),
        pytest.param({MAINTENANCE: "true"}, False, {}, id="not kept: not read at all"),
        pytest.param(None, True, {}, id="none"),
        pytest.param({}, True, {}, id="empty"),
    ],
)
def test_pod_and_node_annotations_are_kept_only_when_asked(
    annotations: Raw | None, keep: bool, expected: Raw
) -> None:
    meta = {} if annotations is None else {"annotations": annotations}
    assert dict(decode_pod(_pod(**meta), keep_annotations=keep).annotations) == expected
    assert dict(decode_node(_node(**meta), keep_annotations=keep).annotations) == expected


def test_by_default_nothing_is_kept() -> None:
    assert decode_pod(_pod(annotations={MAINTENANCE: "true"})).annotations == {}
    assert decode_node(_node(annotations={MAINTENANCE: "true"})).annotations == {}


@pytest.mark.parametrize(
    ("annotations", "path", "message"),
    [
        pytest.param(
            {MAINTENANCE: True},
            f"metadata.annotations[{MAINTENANCE}]",
            "annotation values must be strings, got True",
            id="a boolean value",
        ),
        pytest.param(
            {"example.com/config": {"nested": "object"}},
            "metadata.annotations[example.com/config]",
            "annotation values must be strings, got an object",
            id="an object value (not printed: it may be large)",
        ),
        pytest.param(
            ["a", "list"], "metadata.annotations", "must be an object, got list", id="a list"
        ),
        pytest.param(
            {1: "x"}, "metadata.annotations", "annotation keys must be strings, got 1", id="int key"
        ),
    ],
)
def test_a_bad_annotation_names_its_field(annotations: Any, path: str, message: str) -> None:
    for decode, raw, obj in (
        (decode_pod, _pod(annotations=annotations), "Pod default/web"),
        (decode_node, _node(annotations=annotations), "Node n1"),
    ):
        with pytest.raises(DecodeError) as caught:
            decode(raw, keep_annotations=True)
        assert (caught.value.obj, caught.value.path, caught.value.message) == (obj, path, message)
        decode(raw)  # not kept: never read, so never wrong


@pytest.mark.parametrize(
    ("references", "expected"),
    [
        pytest.param(
            [OWNER],
            (OwnerReference("apps/v1", "ReplicaSet", "web-7d9f", "rs-1", controller=True),),
            id="a ReplicaSet's pod",
        ),
        pytest.param(
            [
                {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "node-1"},
                {**OWNER, "controller": False},
            ],
            (
                OwnerReference("v1", "Node", "n1", "node-1", controller=False),
                OwnerReference("apps/v1", "ReplicaSet", "web-7d9f", "rs-1", controller=False),
            ),
            id="two, neither the controller, in order",
        ),
        pytest.param([{"kind": "Job"}], (OwnerReference("", "Job", "", ""),), id="sparse"),
        pytest.param(None, (), id="none"),
    ],
)
def test_owner_references_are_always_decoded(
    references: list[Raw] | None, expected: tuple[OwnerReference, ...]
) -> None:
    meta = {} if references is None else {"ownerReferences": references}
    for keep in (False, True):
        assert decode_pod(_pod(**meta), keep_annotations=keep).owner_references == expected


@pytest.mark.parametrize(
    ("references", "path", "message"),
    [
        pytest.param(
            {"kind": "ReplicaSet"},
            "metadata.ownerReferences",
            "must be a list, got dict",
            id="not a list",
        ),
        pytest.param(
            ["web-7d9f"],
            "metadata.ownerReferences[0]",
            "must be an object, got str",
            id="an element not an object",
        ),
        pytest.param(
            [OWNER, {**OWNER, "kind": 7}],
            "metadata.ownerReferences[1].kind",
            "must be a string, got 7",
            id="kind not a string",
        ),
        pytest.param(
            [{**OWNER, "uid": None, "name": ["x"]}],
            "metadata.ownerReferences[0].name",
            "must be a string, got ['x']",
            id="name not a string",
        ),
        pytest.param(
            [{**OWNER, "controller": "true"}],
            "metadata.ownerReferences[0].controller",
            "must be a boolean, got 'true'",
            id="controller not a boolean",
        ),
    ],
)
def test_a_bad_owner_reference_names_its_field(references: Any, path: str, message: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_pod(_pod(ownerReferences=references))
    assert (caught.value.obj, caught.value.path, caught.value.message) == (
        "Pod default/web",
        path,
        message,
    )


@pytest.mark.parametrize("keep", [pytest.param(False, id="dropped"), pytest.param(True, id="kept")])
def test_pods_of_one_shape_read_their_own_annotations_and_owners(keep: bool) -> None:
    shapes = PodShapes(keep_annotations=keep)
    pods = [
        _pod(
            f"web-{i}",
            annotations={"example.com/ignore-maintenance": str(i % 2 == 0).lower()},
            ownerReferences=[{**OWNER, "name": f"rs-{i}", "uid": f"uid-{i}"}],
        )
        for i in range(3)
    ]
    decoded = [shapes.decode(raw) for raw in pods]
    assert (shapes.hits, shapes.misses) == (2, 1)  # one shape: the spec decoded once
    assert decoded == [decode_pod(raw, keep_annotations=keep) for raw in pods]
    wanted = ["true", "false", "true"] if keep else [None, None, None]
    assert [p.annotations.get("example.com/ignore-maintenance") for p in decoded] == wanted
    assert [p.owner_references[0].name for p in decoded] == ["rs-0", "rs-1", "rs-2"]


def test_a_bad_annotation_of_a_known_shape_raises_what_a_full_decode_raises() -> None:
    shapes = PodShapes(keep_annotations=True)
    shapes.decode(_pod("a"))
    bad = _pod("b", annotations={MAINTENANCE: 1})
    with pytest.raises(DecodeError) as full:
        decode_pod(bad, keep_annotations=True)
    with pytest.raises(DecodeError) as shaped:
        shapes.decode(bad)
    assert shapes.hits == 1  # decoded from the shape, and failed as the full decode does
    assert str(shaped.value) == str(full.value)
    assert str(full.value) == (
        f"Pod default/b: metadata.annotations[{MAINTENANCE}]: "
        "annotation values must be strings, got 1"
    )


@pytest.mark.parametrize(
    ("sibling", "expected"),
    [
        pytest.param(OWNER, "shared", id="the same owner: the record decoded before"),
        pytest.param(
            {**OWNER, "name": "web-other"},
            OwnerReference("apps/v1", "ReplicaSet", "web-other", "rs-1", controller=True),
            id="same uid, another name: its own",
        ),
        pytest.param(
            {**OWNER, "controller": None},
            OwnerReference("apps/v1", "ReplicaSet", "web-7d9f", "rs-1", controller=False),
            id="same uid, not the controller: its own",
        ),
        pytest.param({**OWNER, "controller": 1}, "error", id="a non-boolean is refused still"),
    ],
)
def test_siblings_share_their_owner_record_only_when_it_is_theirs(
    sibling: Raw, expected: object
) -> None:
    first = decode_pod(_pod("web-0", ownerReferences=[OWNER])).owner_references
    raw = _pod("web-1", ownerReferences=[sibling])
    if expected == "error":
        with pytest.raises(DecodeError, match=r"ownerReferences\[0\]\.controller"):
            decode_pod(raw)
        return
    second = decode_pod(raw).owner_references
    if expected == "shared":
        assert second is first
    else:
        assert second == (expected,)
