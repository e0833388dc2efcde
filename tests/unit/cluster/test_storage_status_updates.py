"""A PV or claim update that changes only ``status`` (and the resourceVersion) is applied
without decoding; the record must equal what decoding the new object gives."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from asched.cluster import storage
from asched.cluster.volume_decode import decode_claim, decode_persistent_volume
from asched.cluster.volumes import VolumeCatalog
from tests.unit.volumes.binding._objects import claim, local_affinity, pv

Raw = dict[str, Any]


def _status(phase: Any) -> Callable[[Raw], None]:
    def change(raw: Raw) -> None:
        raw["status"] = {"phase": phase}

    return change


def _spec(raw: Raw) -> None:
    raw["spec"]["claimRef"] = {"namespace": "default", "name": "data"}


def _label(raw: Raw) -> None:
    raw["metadata"]["labels"] = {"tier": "fast"}


def _annotation(raw: Raw) -> None:
    raw["metadata"]["annotations"] = {"pv.kubernetes.io/bound-by-controller": "yes"}


def _deleting(raw: Raw) -> None:
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"


CASES = [
    # (id, change, decoded without the decoder?)
    pytest.param(_status("Bound"), True, id="phase only: no decoding"),
    pytest.param(_spec, False, id="spec changed: decoded"),
    pytest.param(_label, False, id="labels changed: decoded"),
    pytest.param(_annotation, False, id="annotations changed: decoded"),
    pytest.param(_deleting, False, id="being deleted: decoded"),
    pytest.param(_status(7), False, id="phase not a string: the decoder names the field"),
]


def _apply(kind: str, before: Raw, after: Raw, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    which = storage.BY_KIND[kind]
    catalog = VolumeCatalog()
    storage.apply(catalog, which, before)
    decodes = 0
    real = decode_persistent_volume if kind == "PersistentVolume" else decode_claim
    name = "decode_persistent_volume" if kind == "PersistentVolume" else "decode_claim"

    def counting(raw: Raw) -> Any:
        nonlocal decodes
        decodes += 1
        return real(raw)

    monkeypatch.setattr(storage, name, counting)
    try:
        storage.apply(catalog, which, after)
    except Exception as exc:  # the decoder's error, when it is asked
        return exc, decodes
    return which.store(catalog)[storage.key_of(which, after)], decodes


@pytest.mark.parametrize(("change", "shortcut"), CASES)
@pytest.mark.parametrize(
    ("kind", "before"),
    [
        pytest.param("PersistentVolume", pv("pv-1", affinity=local_affinity("n1")), id="PV"),
        pytest.param("PersistentVolumeClaim", claim("data", volume="pv-1"), id="claim"),
    ],
)
def test_status_only_updates_skip_decoding_and_equal_a_decode(
    kind: str,
    before: Raw,
    change: Callable[[Raw], None],
    shortcut: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    after = copy.deepcopy(before)
    after["metadata"]["resourceVersion"] = "9"
    change(after)
    record, decodes = _apply(kind, before, after, monkeypatch)
    assert decodes == (0 if shortcut else 1)
    if isinstance(record, Exception):
        assert not shortcut
        assert "status.phase" in str(record)
        return
    decode = decode_persistent_volume if kind == "PersistentVolume" else decode_claim
    assert record == decode(after)
    assert record.resource_version == "9"
    assert record.raw is after


def test_prebind_bodies_leave_the_watched_objects_untouched() -> None:
    # PreBind's PUT bodies share what they do not change with the catalog's raw objects;
    # the parts they change (spec.claimRef, annotations) must be their own copies
    from asched.framework.builtin.volume_binding.prebind import claim_on_node, pv_with_claim

    volume = decode_persistent_volume(pv("pv-1", affinity=local_affinity("n1")))
    wanted = decode_claim(claim("data"))
    before = (copy.deepcopy(volume.raw), copy.deepcopy(wanted.raw))
    body = pv_with_claim(volume, wanted)
    annotated = claim_on_node(wanted, "n1")
    assert body["spec"]["claimRef"]["name"] == "data"
    assert annotated["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n1"
    assert (volume.raw, wanted.raw) == before
