"""``volume_match.best_match``: upstream's FindMatchingVolume as the PV controller calls it
(no node), as a table."""

from __future__ import annotations

from typing import Any

import pytest

from asched.tools.sim.controllers import volume_match

UID = "uid-c"


def _pv(name: str, size: str = "1Gi", *, phase: str = "Available", **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if spec.pop("deleting", False):
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], **spec},
        "status": {"phase": phase},
    }


def _claim(size: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "c", "namespace": "ns", "uid": UID},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": size}},
            **spec,
        },
    }


_REF = {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": "c", "uid": UID}


@pytest.mark.parametrize(
    ("volumes", "claim", "delayed", "expected"),
    [
        # 2Gi < 3Gi <= 5Gi < 10Gi: the smallest that holds 3Gi
        pytest.param(
            [_pv("a", "2Gi"), _pv("b", "10Gi"), _pv("c", "5Gi")],
            _claim("3Gi"),
            False,
            "c",
            id="smallest fitting",
        ),
        pytest.param(
            [_pv("a", "5Gi"), _pv("b", "5Gi")], _claim(), False, "a", id="a tie keeps the first"
        ),
        # pre-bound to this claim: chosen although too small and not Available
        pytest.param(
            [_pv("big", "10Gi"), _pv("mine", "1Mi", phase="Pending", claimRef=_REF)],
            _claim("1Gi"),
            False,
            "mine",
            id="pre-bound wins whatever its size",
        ),
        pytest.param(
            [_pv("mine", claimRef={k: v for k, v in _REF.items() if k != "uid"})],
            _claim(),
            True,
            "mine",
            id="pre-bound without uid, delayed claim",
        ),
        pytest.param(
            [_pv("theirs", claimRef={**_REF, "uid": "other"})],
            _claim(),
            False,
            None,
            id="claimRef to another uid",
        ),
        pytest.param([_pv("free")], _claim(), True, None, id="delayed: only pre-bound volumes"),
        pytest.param(
            [_pv("pending", phase="Pending"), _pv("released", phase="Released")],
            _claim(),
            False,
            None,
            id="only Available volumes",
        ),
        pytest.param([_pv("going", deleting=True)], _claim(), False, None, id="being deleted"),
        pytest.param(
            [_pv("block", volumeMode="Block", claimRef=_REF)],
            _claim(),
            False,
            None,
            id="volume mode mismatch even when pre-bound",
        ),
        pytest.param(
            [_pv("gold", storageClassName="gold"), _pv("plain", "2Gi")],
            _claim(storageClassName="gold"),
            False,
            "gold",
            id="class must match",
        ),
        pytest.param(
            [_pv("rwo")],
            _claim(accessModes=["ReadWriteOnce", "ReadOnlyMany"]),
            False,
            None,
            id="claim modes must all be offered",
        ),
        pytest.param(
            [
                _pv("nolabels"),
                {**_pv("labelled"), "metadata": {"name": "labelled", "labels": {"a": "b"}}},
            ],
            _claim(selector={"matchLabels": {"a": "b"}}),
            False,
            "labelled",
            id="selector",
        ),
    ],
)
def test_best_match(volumes, claim, delayed, expected):
    found = volume_match.best_match(volumes, claim, delayed=delayed)
    assert (found["metadata"]["name"] if found else None) == expected
