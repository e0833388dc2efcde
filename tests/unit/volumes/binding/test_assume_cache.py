"""The catalog's assume cache (upstream's AssumeCache): assume, restore, and what a
watched object does to an assumption."""

from __future__ import annotations

import dataclasses

import pytest

from asched.cluster.volume_decode import decode_claim, decode_persistent_volume
from asched.cluster.volumes import ClaimRef, VolumeCatalog
from tests.unit.volumes.binding._objects import claim, pv


def catalog_with_pv(version: str = "5") -> tuple[VolumeCatalog, list[tuple[str, str]]]:
    catalog = VolumeCatalog()
    heard: list[tuple[str, str]] = []
    catalog.put_pv(decode_persistent_volume(pv("pv-1", version=version)))
    catalog.listeners.append(lambda resource, key: heard.append((resource, key)))
    return catalog, heard


def bound_copy(catalog: VolumeCatalog) -> object:
    return dataclasses.replace(catalog.pvs["pv-1"], claim_ref=ClaimRef("default", "c1", "u"))


def test_assume_then_restore_is_exact() -> None:
    catalog, heard = catalog_with_pv()
    watched = catalog.pvs["pv-1"]
    assumed = bound_copy(catalog)
    catalog.assume_pv(assumed)
    assert catalog.pvs["pv-1"] is assumed
    assert catalog.api_pv("pv-1") is watched
    catalog.restore_pv("pv-1")
    catalog.restore_pv("pv-1")  # idempotent
    assert catalog.pvs["pv-1"] is watched
    assert catalog.pv_api == {}
    # one change for the assumption, one for the restore (the second restore is a no-op)
    assert heard == [("persistentvolumes", "pv-1")] * 2


# rows: the watched resourceVersion after the assumption of version 5; whether the
# assumption survives (upstream: only a strictly newer version replaces it)
WATCH_CASES = [
    pytest.param("5", True, id="same version (a resync) keeps the assumption"),
    pytest.param("4", True, id="older version keeps the assumption"),
    pytest.param("6", False, id="newer version replaces it"),
]


@pytest.mark.parametrize(("version", "kept"), WATCH_CASES)
def test_watch_after_assume(version, kept) -> None:
    catalog, _ = catalog_with_pv()
    assumed = bound_copy(catalog)
    catalog.assume_pv(assumed)
    catalog.put_pv(decode_persistent_volume(pv("pv-1", version=version)))
    assert (catalog.pvs["pv-1"] is assumed) == kept
    assert ("pv-1" in catalog.pv_api) == kept
    if not kept:
        catalog.restore_pv("pv-1")  # nothing to restore any more
        assert catalog.pvs["pv-1"].resource_version == version


def test_assume_older_than_stored_is_refused() -> None:
    catalog, _ = catalog_with_pv("5")
    stale = dataclasses.replace(catalog.pvs["pv-1"], resource_version="4")
    with pytest.raises(ValueError, match="out of sync"):
        catalog.assume_pv(stale)


def test_assume_unknown_objects_is_refused() -> None:
    catalog = VolumeCatalog()
    with pytest.raises(KeyError):
        catalog.assume_pv(decode_persistent_volume(pv("pv-x")))
    with pytest.raises(KeyError):
        catalog.assume_claim(decode_claim(claim("c-x")))


def test_claim_assumption_and_removal() -> None:
    catalog = VolumeCatalog()
    catalog.put_claim(decode_claim(claim("c1", version="3")))
    watched = catalog.claims["default/c1"]
    annotated = dataclasses.replace(
        watched, annotations={"volume.kubernetes.io/selected-node": "n1"}
    )
    catalog.assume_claim(annotated)
    assert catalog.claims["default/c1"].selected_node == "n1"
    assert catalog.api_claim("default/c1") is watched
    catalog.remove_claim("default/c1")  # deleted while assumed: both go
    assert catalog.claims == {}
    assert catalog.claim_api == {}
