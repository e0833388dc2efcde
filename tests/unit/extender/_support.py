"""Real test extenders on loopback and the Extender objects that call them.

:func:`started` runs one :func:`~asched.tools.bench.extender_server.serve_extender` per
spec, writes their ``extenders[]`` entries into a KubeSchedulerConfiguration, loads it
with the real loader, and builds the extenders with the real HTTP client, so every test
goes config -> client -> HTTP -> server -> parser.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from asched.cluster.records import PodInfo
from asched.extenders.client import ExtenderClient
from asched.extenders.extender import Extender, build_extenders
from asched.tools.bench.extender_server import ExtenderRules, RunningExtender, serve_extender
from tests.builders import make_node, make_pod, pod_info
from tests.configs import load_config

TYPE_META = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
Raw = dict[str, Any]


@dataclass(frozen=True)
class Spec:
    """One test extender: its server's rules and the fields of its ``extenders[]`` entry."""

    rules: ExtenderRules = field(default_factory=ExtenderRules)
    fields: Mapping[str, Any] = field(default_factory=dict)


def spec(rules: ExtenderRules | None = None, **fields: Any) -> Spec:
    return Spec(rules or ExtenderRules(), fields)


@dataclass
class Running:
    """Started servers (in spec order) and the extenders (in upstream's call order)."""

    servers: list[RunningExtender]
    extenders: tuple[Extender, ...]


@asynccontextmanager
async def started(*specs: Spec, tls: bool | ssl.SSLContext = False) -> AsyncIterator[Running]:
    async with AsyncExitStack() as stack:
        servers = [await stack.enter_async_context(serve_extender(s.rules, tls=tls)) for s in specs]
        entries = [server.entry(**s.fields) for server, s in zip(servers, specs, strict=True)]
        config = load_config({**TYPE_META, "extenders": entries})
        extenders = build_extenders(config.extenders, ExtenderClient)
        try:
            yield Running(servers, extenders)
        finally:
            for extender in extenders:
                await extender.close()


def nodes(*names: str) -> dict[str, Raw]:
    """Raw Node objects by name (insertion order kept)."""
    return {name: make_node(name) for name in names}


def pod(name: str = "pod", uid: str = "", **fields: Any) -> tuple[PodInfo, Raw]:
    """A pod as both the scheduler's record and the JSON the extenders get."""
    raw = make_pod(name, **fields)
    if uid:
        raw["metadata"]["uid"] = uid
    return pod_info(raw), raw


def names_sent(server: RunningExtender, verb: str) -> list[list[str]]:
    """For each call of ``verb``: the node names it carried (NodeNames or Nodes items)."""
    out = []
    for call in server.calls:
        if call.verb != verb:
            continue
        if call.body.get("NodeNames") is not None:
            out.append(list(call.body["NodeNames"]))
        else:
            out.append([item["metadata"]["name"] for item in call.body["Nodes"]["items"]])
    return out
