"""Discovery documents: ``/version``, ``/api``, ``/api/v1``, ``/apis``, ``/apis/<g>[/<v>]``.

Built once from :mod:`asched.tools.sim.apiserver.resources` and served as cached bytes. Shapes follow
a v1.37 server: the core ``APIResourceList`` has no ``apiVersion``; subresources are
listed as ``pods/status``, ``pods/binding``...; the legacy ``bindings`` resource is
listed for ``POST /api/v1/namespaces/<ns>/bindings``; ``/version`` names v1.37.2, with the
emulation and compatibility versions v1.31+ adds. Deliberate difference: a client asking
for aggregated discovery (kubectl >= 1.26) gets these legacy documents with
``application/json`` and falls back to them, as it does against a server without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import orjson

from asched.tools.sim.apiserver.resources import GROUP_VERSIONS, SPECS, ResourceSpec

JSON = dict[str, Any]

VERSION: Final = {
    "major": "1",
    "minor": "37",
    "emulationMajor": "1",
    "emulationMinor": "37",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "36",
    "gitVersion": "v1.37.2",
    "gitCommit": "asched-sim",
    "gitTreeState": "clean",
    "buildDate": "1970-01-01T00:00:00Z",
    "goVersion": "go1.26.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def _resource(spec: ResourceSpec) -> JSON:
    entry: JSON = {
        "name": spec.resource,
        "singularName": spec.singular,
        "namespaced": spec.namespaced,
        "kind": spec.kind,
        "verbs": list(spec.verbs),
    }
    if spec.short_names:
        entry["shortNames"] = list(spec.short_names)
    if spec.categories:
        entry["categories"] = list(spec.categories)
    return entry


def _resources(specs: Iterable[ResourceSpec], group: str, version: str) -> list[JSON]:
    listed: list[JSON] = []
    if not group:
        listed.append(
            {
                "name": "bindings",
                "singularName": "binding",
                "namespaced": True,
                "kind": "Binding",
                "verbs": ["create"],
            }
        )
    for spec in specs:
        if spec.group != group or spec.version != version:
            continue
        listed.append(_resource(spec))
        listed.extend(
            {
                "name": f"{spec.resource}/{sub.name}",
                "singularName": "",
                "namespaced": spec.namespaced,
                "kind": sub.kind,
                "verbs": list(sub.verbs),
            }
            for sub in spec.subresources
        )
    return sorted(listed, key=lambda item: str(item["name"]))


def _group(name: str, versions: tuple[str, ...]) -> JSON:
    listed = [{"groupVersion": f"{name}/{version}", "version": version} for version in versions]
    return {"name": name, "versions": listed, "preferredVersion": listed[0]}


def build(
    specs: Iterable[ResourceSpec] = SPECS,
    group_versions: Mapping[str, tuple[str, ...]] = GROUP_VERSIONS,
) -> Mapping[str, bytes]:
    """Every discovery path -> its encoded document, for the resources served.

    ``group_versions`` lists each group's versions, the preferred one first, in the order
    ``/apis`` lists the groups (built-in groups first, then custom ones, as a real server).
    """
    specs = tuple(specs)
    documents: dict[str, bytes] = {
        "/version": orjson.dumps(VERSION),
        "/api": orjson.dumps(
            {
                "kind": "APIVersions",
                "versions": ["v1"],
                "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}
                ],
            }
        ),
        "/api/v1": orjson.dumps(
            {
                "kind": "APIResourceList",
                "groupVersion": "v1",
                "resources": _resources(specs, "", "v1"),
            }
        ),
    }
    groups = [_group(name, versions) for name, versions in group_versions.items() if name]
    documents["/apis"] = orjson.dumps(
        {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
    )
    for group in groups:
        name = group["name"]
        documents[f"/apis/{name}"] = orjson.dumps({"kind": "APIGroup", "apiVersion": "v1", **group})
        for version in group_versions[name]:
            documents[f"/apis/{name}/{version}"] = orjson.dumps(
                {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": f"{name}/{version}",
                    "resources": _resources(specs, name, version),
                }
            )
    return documents


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field (payloads here are < 128 bytes)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


#: ``/openapi/v2`` with no definitions, for clients that insist on downloading it
#: (kubectl's client-side validation). With no schema for a kind, kubectl skips
#: validating it, as it does for CRDs without a schema; the server still validates.
OPENAPI_V2_JSON: Final = orjson.dumps(
    {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
        "paths": {},
        "definitions": {},
    }
)
OPENAPI_V2_PROTOBUF: Final = _field(1, b"2.0")  # gnostic ``Document.swagger``; all else empty
OPENAPI_V2_PROTOBUF_TYPE: Final = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
