"""scheduler_perf's ``createAny`` and ``updateAny`` against a live API server.

Both ops name objects of any kind by ``apiVersion`` and ``kind``; upstream maps them to
their collection with API discovery (a REST mapper over ``/api/v1`` and
``/apis/<group>/<version>``), so :class:`Discovery` does the same: core kinds, ``apps``,
``scheduling.k8s.io``, ``storage.k8s.io``, ``policy`` and any CRD the server serves.
Then the scope check upstream makes, with its wording: a ``namespace`` given for a
cluster-scoped kind, or none for a namespaced one, is an error naming the template file.

* :func:`create_any`: each object is POSTed as rendered (upstream retries a failing create
  for up to :data:`CREATE_RETRY_SECONDS`, for a CRD whose kind is not served yet; so does
  this, finding the mapping again each time);
* :func:`update_any`: each object is PUT (to ``<name>/<subresources...>`` when the op
  names some) and then PUT to ``<name>/status``, one every ``1 / per_second`` seconds
  (the first after one period, as a Go ticker) or all at once. What asched adds to the
  objects it creates is carried over from the live object, so that an update does not
  undo it: the benchmark's phase label, and for a Pod its ``schedulerName`` and
  ``priorityClassName`` (asched creates pods for its scheduler, with a PriorityClass in
  place of a bare priority) when the template gives none, and its admitted ``priority``
  and ``preemptionPolicy``, as the API server's Priority admission keeps them on update.

Both send ``fieldValidation=Strict`` (as upstream) when the server understands it
(v1.25 and later); older servers ignore unknown fields in any case.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from asched.errors import AschedError
from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import RestClient
from asched.tools.bench import perf_steps
from asched.tools.bench.observe import PHASE_LABEL

Raw = dict[str, Any]
#: how long upstream retries a failing createAny, seconds
CREATE_RETRY_SECONDS: Final = 20.0
#: the pause between createAny attempts, seconds
_RETRY_PAUSE: Final = 1.0
#: the first minor version of Kubernetes whose API server takes ``fieldValidation``
STRICT_FROM_MINOR: Final = 25


class StepError(AschedError):
    """A createAny or updateAny step failed; the message names the template and object."""


class ScopeError(StepError):
    """A namespace given for a cluster-scoped kind, or missing for a namespaced one."""


@dataclass(frozen=True, slots=True)
class Resource:
    """One kind's REST mapping: ``group_version`` (``v1``, ``apps/v1``), its ``kind``, its
    collection ``name`` (plural) and whether it is namespaced."""

    group_version: str
    kind: str
    name: str
    namespaced: bool

    @property
    def group_kind(self) -> str:
        """``Kind.group`` (``Kind`` for the core group), as Go prints a GroupKind."""
        group = self.group_version.rpartition("/")[0]
        return f"{self.kind}.{group}" if group else self.kind

    @property
    def scope(self) -> str:
        """upstream's scope names: ``namespace`` or ``root``."""
        return "namespace" if self.namespaced else "root"

    def collection(self, namespace: str) -> str:
        base = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        return f"{base}/namespaces/{namespace}/{self.name}" if namespace else f"{base}/{self.name}"


def discovery_path(api_version: str) -> str:
    """The discovery document listing the resources of ``api_version``."""
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


class Discovery:
    """apiVersion + kind -> :class:`Resource`, from the server's discovery documents
    (each fetched once, again when a kind is missing from it)."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest
        self._documents: dict[str, list[Mapping[str, Any]]] = {}

    async def resolve(self, api_version: str, kind: str) -> Resource:
        """The mapping of ``kind`` in ``api_version``.

        Raises
        ------
        StepError
            The group/version is not served, or has no such kind.
        """
        if not api_version or not kind:
            raise StepError("the object needs apiVersion and kind")
        for fresh in (False, True):
            for entry in await self._resources(api_version, fresh=fresh):
                name = str(entry.get("name", ""))
                if entry.get("kind") == kind and "/" not in name:
                    return Resource(api_version, kind, name, bool(entry.get("namespaced")))
        raise StepError(
            f"no resource of kind {kind} in {api_version} (the server does not serve it)"
        )

    async def _resources(self, api_version: str, *, fresh: bool) -> list[Mapping[str, Any]]:
        if fresh or api_version not in self._documents:
            path = discovery_path(api_version)
            try:
                document = await self.rest.get(path)
            except StatusError as exc:
                if exc.status != 404:
                    raise
                document = {}
            self._documents[api_version] = list(document.get("resources") or [])
        return self._documents[api_version]


def scope_error(resource: Resource, namespace: str, template: str) -> str | None:
    """upstream's error for a namespace given to a cluster-scoped kind or missing for a
    namespaced one (None: the scope fits)."""
    if namespace and not resource.namespaced:
        return (
            f"namespace {namespace!r} set for {template!r}, but {resource.group_kind!r} has "
            f"scope {resource.scope!r}"
        )
    if not namespace and resource.namespaced:
        return (
            f"namespace not set for {template!r}, but {resource.group_kind!r} has scope "
            f"{resource.scope!r}"
        )
    return None


async def strict_params(rest: RestClient) -> dict[str, str | int]:
    """``{"fieldValidation": "Strict"}`` when the server takes it (v1.25+), else nothing."""
    version = await rest.get("/version")
    minor = "".join(ch for ch in str(version.get("minor", "")) if ch.isdigit())
    if str(version.get("major")) == "1" and minor and int(minor) >= STRICT_FROM_MINOR:
        return {"fieldValidation": "Strict"}
    return {}


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or f"{meta.get('generateName', '')}*"
    return f"{obj.get('kind')} {name}"


async def create_any(
    rest: RestClient, discovery: Discovery, step: perf_steps.CreateAny, phase: str
) -> int:
    """Create the step's objects in order (labelled ``phase``); the number created.

    Raises
    ------
    StepError
        A scope mismatch, or an object still failing after :data:`CREATE_RETRY_SECONDS`.
    """
    params = await strict_params(rest)
    loop = asyncio.get_running_loop()
    for obj in step.objects:
        body: Raw = copy.deepcopy(dict(obj))
        body.setdefault("metadata", {}).setdefault("labels", {})[PHASE_LABEL] = phase
        deadline = loop.time() + CREATE_RETRY_SECONDS
        while True:
            try:
                resource = await discovery.resolve(
                    str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
                )
                problem = scope_error(resource, step.namespace, step.template)
                if problem is not None:
                    raise ScopeError(f"{step.template}: {problem}")
                await rest.request(
                    "POST", resource.collection(step.namespace), params=params, body=body
                )
                break
            except ScopeError:
                raise
            except (StepError, StatusError) as exc:
                if loop.time() >= deadline:
                    raise StepError(
                        f"{step.template}: timed out while creating {_describe(obj)}, last "
                        f"error was: {exc}"
                    ) from None
                await asyncio.sleep(_RETRY_PAUSE)
    return len(step.objects)


async def _carried(
    rest: RestClient, path: str, obj: Mapping[str, Any], *, scheduler_name: str
) -> Raw:
    """``obj`` with what asched added at creation copied from the live object (see the
    module docstring); ``obj`` as it is when there is no live object."""
    body: Raw = copy.deepcopy(dict(obj))
    try:
        live = await rest.get(path)
    except StatusError as exc:
        if exc.status == 404:
            return body  # the PUT reports it, as upstream's would
        raise
    meta: Raw = body.setdefault("metadata", {})
    phase = ((live.get("metadata") or {}).get("labels") or {}).get(PHASE_LABEL)
    if phase is not None:
        meta["labels"] = {**(meta.get("labels") or {}), PHASE_LABEL: phase}
    if body.get("kind") == "Pod":
        spec: Raw = body.setdefault("spec", {})
        live_spec = live.get("spec") or {}
        if not spec.get("schedulerName"):
            spec["schedulerName"] = live_spec.get("schedulerName") or scheduler_name
        if not spec.get("priorityClassName") and live_spec.get("priorityClassName"):
            spec["priorityClassName"] = live_spec["priorityClassName"]
        # what the API server's Priority admission does on an update: the pod keeps the
        # priority (and policy) it was admitted with
        for field in ("priority", "preemptionPolicy"):
            if field in live_spec:
                spec[field] = live_spec[field]
    return body


async def update_any(
    rest: RestClient, discovery: Discovery, step: perf_steps.UpdateAny, *, scheduler_name: str
) -> int:
    """Update the step's objects (see the module docstring); the number updated.

    Raises
    ------
    StepError
        A scope mismatch, or a PUT the server refused (naming the object).
    """
    params = await strict_params(rest)
    loop = asyncio.get_running_loop()
    tick = loop.time()
    resource: Resource | None = None
    for obj in step.objects:
        if step.per_second > 0:
            tick += 1.0 / step.per_second
            await asyncio.sleep(max(0.0, tick - loop.time()))
        if resource is None:
            try:
                resource = await discovery.resolve(
                    str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
                )
            except StatusError as exc:
                raise StepError(f"{step.template}: discovery of {_describe(obj)}: {exc}") from None
            problem = scope_error(resource, step.namespace, step.template)
            if problem is not None:
                raise ScopeError(f"{step.template}: {problem}")
        name = str((obj.get("metadata") or {}).get("name"))
        path = f"{resource.collection(step.namespace)}/{name}"
        try:
            body = await _carried(rest, path, obj, scheduler_name=scheduler_name)
        except StatusError as exc:
            raise StepError(f"{step.template}: reading {_describe(obj)}: {exc}") from None
        target = "/".join([path, *step.subresources])
        try:
            await rest.request("PUT", target, params=params, body=body)
        except StatusError as exc:
            raise StepError(f"{step.template}: failed to update {_describe(obj)}: {exc}") from None
        try:
            await rest.request("PUT", f"{path}/status", params=params, body=body)
        except StatusError as exc:
            raise StepError(
                f"{step.template}: failed to update the status of {_describe(obj)}: {exc}"
            ) from None
    return len(step.objects)
