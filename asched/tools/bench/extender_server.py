"""A scheduler extender to test and benchmark against: declarative rules over real HTTP(S).

:func:`serve_extender` starts an aiohttp server on loopback that speaks the extender
protocol (``k8s.io/kube-scheduler/extender/v1``) for the four verbs, deciding from
:class:`ExtenderRules`:

* **filter**: a node passes unless it is in ``fail`` (``FailedNodes``) or
  ``unresolvable`` (``FailedAndUnresolvableNodes``), or ``passes`` is set and does not
  hold it (``FailedNodes``); the answer mirrors the request: ``NodeNames`` for a
  nodeCacheCapable call, full ``Nodes`` otherwise;
* **prioritize**: a node's score is ``scores[name]``, else the integer value of its
  ``score_label`` (full Node objects only), else ``default_score``;
* **preempt**: the victims of nodes that pass the filter rules are kept as sent (by UID),
  the others are dropped; ``preempt_no_victims`` answers every node with no victims;
* **bind**: recorded, answered with ``bind_error`` when set, and, with ``api`` set, POSTed
  as a ``v1.Binding`` to that API server (its failure becomes the answer's ``Error``).

Misbehaviour, per verb (``faults`` maps a verb, or ``"*"`` for all, to a :data:`Fault`):
``status-500``, ``not-json`` (a 200 with a body that is not JSON), ``wrong-shape`` (JSON
of the wrong type), ``unknown-node`` (the answer adds a node that was not sent),
``error`` (the answer's ``Error`` field says ``fault_message``), ``hang`` (no answer until
the server stops). ``latency_ms`` delays every answer (``asyncio.sleep``).

Every request is recorded in :attr:`RunningExtender.calls` (verb and decoded body) as it
arrives; :meth:`RunningExtender.wait_for_calls` waits for them.
HTTPS: ``tls=True`` makes a throw-away CA (the simulator's, which needs the ``sim`` extra)
whose PEM is :attr:`RunningExtender.ca_pem`; an ``ssl.SSLContext`` is used as given.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import aiohttp
import orjson
from aiohttp import web

Fault = Literal["status-500", "not-json", "wrong-shape", "unknown-node", "error", "hang"]
#: The node name the ``unknown-node`` fault adds to an answer.
UNKNOWN_NODE: Final = "no-such-node"
_JSON: Final = "application/json"


@dataclass(frozen=True, slots=True)
class ApiTarget:
    """Where a bind call POSTs the Binding: an API server URL, a bearer token, its CA."""

    url: str
    token: str = ""
    ca_pem: bytes | None = None


@dataclass(frozen=True, slots=True)
class ExtenderRules:
    """What the test extender answers (see the module docstring)."""

    filter_verb: str = "filter"
    prioritize_verb: str = "prioritize"
    preempt_verb: str = "preempt"
    bind_verb: str = "bind"
    fail: frozenset[str] = frozenset()
    unresolvable: frozenset[str] = frozenset()
    passes: frozenset[str] | None = None
    #: reason text; ``{node}`` is replaced by the node's name
    fail_reason: str = "node {node} failed the test extender"
    unresolvable_reason: str = "node {node} failed the test extender and is unresolvable"
    scores: Mapping[str, int] = field(default_factory=dict)
    score_label: str = ""
    default_score: int = 0
    preempt_no_victims: bool = False
    bind_error: str = ""
    api: ApiTarget | None = None
    latency_ms: float = 0.0
    faults: Mapping[str, Fault] = field(default_factory=dict)
    fault_message: str = "the test extender failed on purpose"

    def verdict(self, node: str) -> Literal["pass", "fail", "unresolvable"]:
        """How the filter rules judge ``node``."""
        if node in self.unresolvable:
            return "unresolvable"
        if node in self.fail or (self.passes is not None and node not in self.passes):
            return "fail"
        return "pass"

    def fault(self, verb: str) -> Fault | None:
        return self.faults.get(verb, self.faults.get("*"))


@dataclass(frozen=True, slots=True)
class Call:
    """One request the extender received."""

    verb: str
    body: Any


@dataclass(slots=True)
class RunningExtender:
    """A started test extender: where it listens and what it was asked."""

    url: str
    rules: ExtenderRules
    ca_pem: bytes | None = None
    calls: list[Call] = field(default_factory=list)
    _arrivals: asyncio.Condition = field(default_factory=asyncio.Condition)

    def verbs_called(self) -> list[str]:
        return [call.verb for call in self.calls]

    def calls_of(self, verb: str | None = None) -> list[Call]:
        """The calls received (of ``verb`` only, when given), in arrival order."""
        return [call for call in self.calls if verb is None or call.verb == verb]

    async def record(self, call: Call) -> None:
        """Record a call and wake :meth:`wait_for_calls`."""
        async with self._arrivals:
            self.calls.append(call)
            self._arrivals.notify_all()

    async def wait_for_calls(self, count: int, verb: str | None = None) -> list[Call]:
        """Wait until ``count`` calls (of ``verb``) have arrived; return them all.

        A call counts as soon as its request is read, before any latency or fault: a
        test can wait for "the extender is now holding the pod" without sleeping.
        """
        async with self._arrivals:
            await self._arrivals.wait_for(lambda: len(self.calls_of(verb)) >= count)
        return self.calls_of(verb)

    def entry(self, *, preempt: bool = False, bind: bool = False, **fields: Any) -> dict[str, Any]:
        """An ``extenders[]`` entry for this server: its URL, verbs and CA, weight 1.

        Filter and prioritize are in; ``preempt`` and ``bind`` add those verbs (only one
        extender of a configuration may bind). ``fields`` are added as written
        (``weight=2``, ``ignorable=True``, ...); a verb set to ``""`` leaves that call out.
        """
        out: dict[str, Any] = {
            "urlPrefix": self.url,
            "filterVerb": self.rules.filter_verb,
            "prioritizeVerb": self.rules.prioritize_verb,
            "weight": 1,
        }
        if preempt:
            out["preemptVerb"] = self.rules.preempt_verb
        if bind:
            out["bindVerb"] = self.rules.bind_verb
        if self.ca_pem is not None:
            out["tlsConfig"] = {"caData": base64.b64encode(self.ca_pem).decode("ascii")}
        out.update(fields)
        return {key: value for key, value in out.items() if value != ""}


def _names(args: Mapping[str, Any]) -> tuple[list[str], dict[str, Any] | None]:
    """The node names of a filter/prioritize body, and the Node objects when it has them."""
    names = args.get("NodeNames")
    if names is not None:
        return list(names), None
    items = (args.get("Nodes") or {}).get("items") or []
    nodes = {item["metadata"]["name"]: item for item in items}
    return list(nodes), nodes


class _Handlers:
    """The request handlers of one server (its rules, its record, its stop signal)."""

    def __init__(self, state: RunningExtender, stopping: asyncio.Event) -> None:
        self.state = state
        self.rules = state.rules
        self.stopping = stopping
        self.api_session: aiohttp.ClientSession | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        verb = request.match_info["verb"]
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return web.Response(status=400, text="request body is not JSON")
        await self.state.record(Call(verb, body))
        if self.rules.latency_ms:
            await asyncio.sleep(self.rules.latency_ms / 1000)
        fault = self.rules.fault(verb)
        if fault == "hang":
            await self.stopping.wait()
            return web.Response(status=503, text="stopping")
        if fault == "status-500":
            return web.Response(status=500, text=self.rules.fault_message)
        if fault == "not-json":
            return web.Response(status=200, text="<html>not json</html>", content_type=_JSON)
        if fault == "wrong-shape":
            return web.json_response("a string where an object belongs", dumps=_dumps)
        answer = await self._answer(verb, body, unknown=fault == "unknown-node")
        if fault == "error":
            answer = {"Error": self.rules.fault_message}
        return web.json_response(answer, dumps=_dumps)

    async def _answer(self, verb: str, body: Any, *, unknown: bool) -> Any:
        rules = self.rules
        if verb == rules.filter_verb:
            return self._filter(body, unknown=unknown)
        if verb == rules.prioritize_verb:
            return self._prioritize(body, unknown=unknown)
        if verb == rules.preempt_verb:
            return self._preempt(body, unknown=unknown)
        if verb == rules.bind_verb:
            return await self._bind(body)
        return {"Error": f"unknown verb {verb!r}"}

    def _filter(self, args: Mapping[str, Any], *, unknown: bool) -> dict[str, Any]:
        names, nodes = _names(args)
        feasible = [n for n in names if self.rules.verdict(n) == "pass"]
        failed = {
            n: self.rules.fail_reason.format(node=n)
            for n in names
            if self.rules.verdict(n) == "fail"
        }
        unresolvable = {
            n: self.rules.unresolvable_reason.format(node=n)
            for n in names
            if self.rules.verdict(n) == "unresolvable"
        }
        answer: dict[str, Any] = {
            "FailedNodes": failed,
            "FailedAndUnresolvableNodes": unresolvable,
            "Error": "",
        }
        if nodes is None:
            answer["NodeNames"] = [*feasible, UNKNOWN_NODE] if unknown else feasible
        else:
            items = [nodes[n] for n in feasible]
            if unknown:
                items.append({"metadata": {"name": UNKNOWN_NODE}})
            answer["Nodes"] = {"metadata": {}, "items": items}
        return answer

    def _score(self, name: str, node: Mapping[str, Any] | None) -> int:
        rules = self.rules
        if name in rules.scores:
            return rules.scores[name]
        if rules.score_label and node is not None:
            labels = (node.get("metadata") or {}).get("labels") or {}
            value = labels.get(rules.score_label)
            if isinstance(value, str) and value.lstrip("-").isdigit():
                return int(value)
        return rules.default_score

    def _prioritize(self, args: Mapping[str, Any], *, unknown: bool) -> list[dict[str, Any]]:
        names, nodes = _names(args)
        out = [
            {"Host": n, "Score": self._score(n, None if nodes is None else nodes[n])} for n in names
        ]
        if unknown:
            out.append({"Host": UNKNOWN_NODE, "Score": 10})
        return out

    def _preempt(self, args: Mapping[str, Any], *, unknown: bool) -> dict[str, Any]:
        meta = args.get("NodeNameToMetaVictims")
        if meta is None:
            meta = {
                node: {
                    "Pods": [{"UID": pod["metadata"]["uid"]} for pod in victims.get("Pods") or ()],
                    "NumPDBViolations": victims.get("NumPDBViolations", 0),
                }
                for node, victims in (args.get("NodeNameToVictims") or {}).items()
            }
        kept: dict[str, Any] = {}
        for node, victims in meta.items():
            if self.rules.verdict(node) != "pass":
                continue
            if self.rules.preempt_no_victims:
                kept[node] = {"Pods": [], "NumPDBViolations": 0}
            else:
                kept[node] = victims
        if unknown:
            kept[UNKNOWN_NODE] = {"Pods": [{"UID": "no-such-uid"}], "NumPDBViolations": 0}
        return {"NodeNameToMetaVictims": kept}

    async def _bind(self, args: Mapping[str, Any]) -> dict[str, Any]:
        if self.rules.bind_error:
            return {"Error": self.rules.bind_error}
        api = self.rules.api
        if api is None:
            return {"Error": ""}
        namespace, name = args["PodNamespace"], args["PodName"]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": args.get("PodUID", "")},
            "target": {"apiVersion": "v1", "kind": "Node", "name": args["Node"]},
        }
        if self.api_session is None:
            context = ssl.create_default_context(cadata=api.ca_pem.decode()) if api.ca_pem else True
            self.api_session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=context), trust_env=False
            )
        headers = {"Content-Type": _JSON}
        if api.token:
            headers["Authorization"] = f"Bearer {api.token}"
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
        try:
            async with self.api_session.post(
                api.url.rstrip("/") + path, data=orjson.dumps(binding), headers=headers
            ) as response:
                text = await response.text()
                if response.status >= 300:
                    return {"Error": f"binding {namespace}/{name}: HTTP {response.status}: {text}"}
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            return {"Error": f"binding {namespace}/{name}: {type(exc).__name__}: {exc}"}
        return {"Error": ""}


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _server_tls(*, tls: bool | ssl.SSLContext) -> tuple[ssl.SSLContext | None, bytes | None]:
    if isinstance(tls, ssl.SSLContext):
        return tls, None
    if not tls:
        return None, None
    from asched.tools.sim.apiserver import tls as sim_tls

    serving = sim_tls.generate("127.0.0.1")
    return serving.context, serving.ca_pem


@asynccontextmanager
async def serve_extender(
    rules: ExtenderRules | None = None,
    *,
    tls: bool | ssl.SSLContext = False,
    host: str = "127.0.0.1",
    port: int = 0,
    prefix: str = "",
) -> AsyncIterator[RunningExtender]:
    """Run a test extender until the block ends; yields where it listens and its record.

    Parameters
    ----------
    rules : ExtenderRules, optional
        What to answer; the defaults pass every node with score 0.
    tls : bool or ssl.SSLContext
        False for HTTP; True for HTTPS with a throw-away CA (``ca_pem``); a context to
        serve HTTPS with it (the caller knows its CA).
    host, port : str, int
        Where to listen (port 0: a free one).
    prefix : str
        A path before the verbs (``/scheduler`` gives ``http://host:port/scheduler``).
    """
    rules = rules or ExtenderRules()
    context, ca_pem = _server_tls(tls=tls)
    state = RunningExtender("", rules, ca_pem)
    stopping = asyncio.Event()
    handlers = _Handlers(state, stopping)
    app = web.Application()
    app.router.add_post(prefix.rstrip("/") + "/{verb}", handlers.handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, ssl_context=context)
        await site.start()
        bound = runner.addresses[0][1]
        scheme = "https" if context is not None else "http"
        state.url = f"{scheme}://{host}:{bound}{prefix.rstrip('/')}"
        yield state
    finally:
        stopping.set()
        if handlers.api_session is not None:
            await handlers.api_session.close()
        await runner.cleanup()
