"""Builders for the storage tests and a helper that waits, by watch, for an object's state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .conftest import Api

JSON = dict[str, Any]
NS = "/api/v1/namespaces/default"
PVS = "/api/v1/persistentvolumes"
CLAIMS = f"{NS}/persistentvolumeclaims"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
CSI_DRIVERS = "/apis/storage.k8s.io/v1/csidrivers"
CSI_NODES = "/apis/storage.k8s.io/v1/csinodes"
HOLLOW = "local.hollow.asched.io"


def volume(
    name: str,
    size: str = "1Gi",
    *,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    storage_class: str | None = None,
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> JSON:
    """A hostPath PersistentVolume."""
    body: JSON = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": list(modes),
            "hostPath": {"path": f"/data/{name}"},
            **spec,
        },
    }
    if storage_class is not None:
        body["spec"]["storageClassName"] = storage_class
    return body


def claim(
    name: str,
    size: str = "1Gi",
    *,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    storage_class: str | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> JSON:
    """A PersistentVolumeClaim in ``default``."""
    body: JSON = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, **spec},
    }
    if storage_class is not None:
        body["spec"]["storageClassName"] = storage_class
    return body


def storage_class(
    name: str, provisioner: str = HOLLOW, *, wait: bool = False, **extra: Any
) -> JSON:
    """A StorageClass; ``wait`` makes it WaitForFirstConsumer."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": "WaitForFirstConsumer" if wait else "Immediate",
        **extra,
    }


def capacity(name: str, storage_class_name: str, amount: str, node: str | None = None) -> JSON:
    """A CSIStorageCapacity (v1) of one class, for one node's hostname (or everywhere)."""
    topology = {"matchLabels": {"kubernetes.io/hostname": node}} if node else {}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name},
        "storageClassName": storage_class_name,
        "nodeTopology": topology,
        "capacity": amount,
    }


async def create(api: Api, path: str, body: JSON) -> JSON:
    """POST ``body``; assert 201 and return the stored object."""
    reply = await api.post(path, body)
    assert reply.status == 201, reply.body
    created: JSON = reply.body
    return created


async def wait_until(
    api: Api, collection: str, name: str, holds: Callable[[JSON], bool], deadline: float = 5.0
) -> JSON:
    """The object ``name`` of ``collection`` once ``holds(obj)``: checked in a list, then in
    every watch event from that list's version on."""
    listed = (await api.get(f"{collection}?fieldSelector=metadata.name={name}")).body
    for item in listed["items"]:
        if holds(item):
            result: JSON = item
            return result
    since = listed["metadata"]["resourceVersion"]
    events = await api.watch(
        f"{collection}?watch=1&resourceVersion={since}&fieldSelector=metadata.name={name}",
        until=lambda seen: seen[-1]["type"] != "DELETED" and holds(seen[-1]["object"]),
        deadline=deadline,
    )
    found: JSON = events[-1]["object"]
    return found


async def events_about(api: Api, name: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of every Event about the object ``name`` in ``default``."""
    reply = await api.get(f"{NS}/events?fieldSelector=involvedObject.name={name}")
    return [(e["type"], e["reason"], e["message"]) for e in reply.body["items"]]


async def wait_for_event(api: Api, name: str, reason: str, deadline: float = 5.0) -> JSON:
    """The first Event of ``reason`` about the object ``name`` in ``default``, by watch."""
    path = f"{NS}/events?fieldSelector=involvedObject.name={name}"
    listed = (await api.get(path)).body
    for item in listed["items"]:
        if item["reason"] == reason:
            found: JSON = item
            return found
    since = listed["metadata"]["resourceVersion"]
    events = await api.watch(
        f"{path}&watch=1&resourceVersion={since}",
        until=lambda seen: seen[-1]["object"].get("reason") == reason,
        deadline=deadline,
    )
    event: JSON = events[-1]["object"]
    return event
