"""The ops of a scheduler_perf workload as typed values, each validated once.

:mod:`asched.tools.bench.perf_config` checks what every op of a config file shares (known
fields, integer counts, booleans, durations); :func:`parse` checks what each kind of op
needs of its own fields after the workload's parameters are substituted and returns one
frozen dataclass per op kind, so the translation (:mod:`asched.tools.bench.perf_builder`)
reads attributes it can trust instead of looking keys up in a mapping. A field of the
wrong shape is an :class:`~asched.errors.InputError` naming the op and the field; whether
asched can run a well-formed op is the builder's question (:class:`Unsupported`), and so
is everything that needs a template file read.

Ops asched refuses whole (dynamic resource allocation, workload-aware PodGroups) become a
:class:`RefusedOp` without their fields checked, as the config checks none of a DRA op's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

from asched.errors import InputError
from asched.tools.bench.perf_config import Op
from asched.tools.bench.perf_node_ops import CreateNodesOp as CreateNodesOp, create_nodes
from asched.tools.bench.perf_templates import op_name

#: upstream's churn interval when the op gives none, milliseconds
DEFAULT_CHURN_INTERVAL_MS: Final = 500
#: A template path as the op gives it: resolved against the config's folder, except
#: inside createPodSets' createPodsOp, whose paths the config leaves as written.
TemplatePath = Path | str


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What parsing an op needs besides the op: the workload's full name (messages start
    with it) and the test case's default pod template."""

    name: str
    default_pod_template: Path | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateNamespacesOp:
    """``count`` namespaces ``<prefix>-<i>`` from ``template``; no template: plain
    namespaces, which the runner creates anyway for the pods that use them."""

    opcode: ClassVar[str] = "createNamespaces"
    index: int
    template: Path | None
    prefix: str
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class VolumeTemplates:
    """The PV and claim templates of a createPods op: a bound pair per pod."""

    persistent_volume: TemplatePath
    claim: TemplatePath


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePodsOp:
    """``count`` pods in ``namespace`` from ``template`` (the op's, else the test case's
    default; None: upstream's default pod)."""

    opcode: ClassVar[str] = "createPods"
    index: int
    count: int
    namespace: str
    template: TemplatePath | None
    template_params: Mapping[str, Any] | None
    volumes: VolumeTemplates | None
    collect_metrics: bool
    skip_wait: bool
    steady_state: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePodSetsOp:
    """``pods``: the op's createPodsOp once per namespace ``<namespacePrefix>-<i>``."""

    opcode: ClassVar[str] = "createPodSets"
    index: int
    pods: tuple[CreatePodsOp, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChurnOp:
    """Objects of ``templates`` churned every ``interval_ms`` while measuring.

    ``mode`` is None when the op names none (churned as ``create``, without the refusal of
    a limit that an explicit ``create`` gets).
    """

    opcode: ClassVar[str] = "churn"
    index: int
    mode: Literal["create", "recreate"] | None
    number: int
    interval_ms: int
    namespace: str
    templates: tuple[Path, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BarrierOp:
    """Wait for the pods of ``namespaces`` (none: those the earlier ops created) matching
    ``label_selector`` ("" for all).

    ``stage`` is None when the op writes ``stageRequirement: null``: such a barrier waits
    as a Scheduled one but is never taken as already holding.
    """

    opcode: ClassVar[str] = "barrier"
    index: int
    stage: Literal["Scheduled", "Attempted"] | None
    label_selector: str
    namespaces: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SleepOp:
    opcode: ClassVar[str] = "sleep"
    index: int
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletePodsOp:
    """Delete the pods of ``namespace`` matching ``label_selector``, ``per_second`` (0:
    all at once); ``wait``: before the next op."""

    opcode: ClassVar[str] = "deletePods"
    index: int
    namespace: str
    label_selector: str
    per_second: int
    wait: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateAnyOp:
    """``count`` objects rendered from ``template`` in ``namespace`` ("": cluster-scoped)."""

    opcode: ClassVar[str] = "createAny"
    index: int
    template: Path
    template_params: Mapping[str, Any] | None
    count: int
    namespace: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateAnyOp:
    """``count`` objects rendered from ``template``, each PUT (to ``subresources`` when
    given), ``per_second`` (0: all at once)."""

    opcode: ClassVar[str] = "updateAny"
    index: int
    template: Path
    template_params: Mapping[str, Any] | None
    count: int
    namespace: str
    per_second: int
    subresources: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class StartCollectingOp:
    """Opens the measured span; ``namespaces`` (none: any) hold its pods.
    ``selects_by_label``: the op chooses its pods by a label selector."""

    opcode: ClassVar[str] = "startCollectingMetrics"
    index: int
    namespaces: tuple[str, ...]
    selects_by_label: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class StopCollectingOp:
    opcode: ClassVar[str] = "stopCollectingMetrics"
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusedOp:
    """An op the translation has no way to run, whatever its fields say."""

    index: int
    opcode: str


PerfOp = (
    CreateNodesOp
    | CreateNamespacesOp
    | CreatePodsOp
    | CreatePodSetsOp
    | ChurnOp
    | BarrierOp
    | SleepOp
    | DeletePodsOp
    | CreateAnyOp
    | UpdateAnyOp
    | StartCollectingOp
    | StopCollectingOp
    | RefusedOp
)


def parse(op: Op, context: Context) -> PerfOp:
    """``op`` (its parameters substituted) as the typed op of its opcode.

    Raises
    ------
    InputError
        A field the op kind needs is missing or of the wrong shape.
    """
    parser = _PARSERS.get(op.opcode)
    if parser is None:
        return RefusedOp(index=op.index, opcode=op.opcode)
    return parser(op, context)


def _create_nodes(op: Op, context: Context) -> CreateNodesOp:
    return create_nodes(op, context.name)


def _create_namespaces(op: Op, context: Context) -> CreateNamespacesOp:
    del context  # (no field of its own to check)
    return CreateNamespacesOp(
        index=op.index,
        template=op.get("namespaceTemplatePath"),
        prefix=str(op.get("prefix") or f"namespace-{op.index}"),
        count=int(op.get("count", 0)),
    )


def _create_pods(op: Op, context: Context) -> CreatePodsOp:
    return CreatePodsOp(
        index=op.index,
        count=int(op.get("count", 0)),
        namespace=str(op.get("namespace") or f"namespace-{op.index}"),
        template=_template_path(op.get("podTemplatePath") or context.default_pod_template),
        template_params=op.get("templateParams"),
        volumes=_volume_templates(op, context),
        collect_metrics=bool(op.get("collectMetrics")),
        skip_wait=bool(op.get("skipWaitToCompletion")),
        steady_state=bool(op.get("steadyState")),
    )


def _template_path(value: Any) -> TemplatePath | None:
    """A path field as the template readers take it (they read ``str(value)``)."""
    return value if value is None or isinstance(value, Path | str) else str(value)


def _volume_templates(op: Op, context: Context) -> VolumeTemplates | None:
    """A PV and a claim per pod (upstream's ``getPodStrategy``: without a claim template
    the pods are plain, whatever the PV template says)."""
    claim = op.get("persistentVolumeClaimTemplatePath")
    if claim is None:
        return None
    pv = op.get("persistentVolumeTemplatePath")
    if pv is None:
        raise InputError(
            f"{context.name}: {op_name(op)}.persistentVolumeTemplatePath: required with "
            "persistentVolumeClaimTemplatePath (each pod gets a PV bound to its claim)"
        )
    path_of_pv = _template_path(pv)
    path_of_claim = _template_path(claim)
    assert path_of_pv is not None  # (neither is None)
    assert path_of_claim is not None
    return VolumeTemplates(persistent_volume=path_of_pv, claim=path_of_claim)


def _create_pod_sets(op: Op, context: Context) -> CreatePodSetsOp:
    """``count`` createPods ops, the i-th in namespace ``<namespacePrefix>-<i>`` (none
    parsed when ``count`` is 0)."""
    inner = op.get("createPodsOp")
    prefix = op.get("namespacePrefix")
    if not isinstance(inner, Mapping) or not isinstance(prefix, str) or not prefix:
        raise InputError(f"{context.name}: {op_name(op)}: needs namespacePrefix and createPodsOp")
    pods = tuple(
        _create_pods(Op(op.index, "createPods", {**inner, "namespace": f"{prefix}-{i}"}), context)
        for i in range(int(op.get("count", 0)))
    )
    return CreatePodSetsOp(index=op.index, pods=pods)


def _churn(op: Op, context: Context) -> ChurnOp:
    mode = op.get("mode")  # (the config checks the value)
    number = int(op.get("number", 0))
    if mode == "recreate" and number < 1:
        raise InputError(f"{context.name}: {op_name(op)}.number: must be >= 1 in recreate mode")
    return ChurnOp(
        index=op.index,
        mode="recreate" if mode == "recreate" else "create" if mode == "create" else None,
        number=number,
        interval_ms=int(op.get("intervalMilliseconds") or DEFAULT_CHURN_INTERVAL_MS),
        namespace=str(op.get("namespace") or f"namespace-{op.index}"),
        templates=tuple(op.get("templatePaths") or ()),
    )


def _barrier(op: Op, context: Context) -> BarrierOp:
    stage = op.get("stageRequirement", "Scheduled")  # (the config checks the value)
    return BarrierOp(
        index=op.index,
        stage="Attempted" if stage == "Attempted" else "Scheduled" if stage else None,
        label_selector=_label_selector(op, context),
        namespaces=_names(op, "namespaces", context),
    )


def _label_selector(op: Op, context: Context) -> str:
    """The op's ``labelSelector`` map as a selector string (``k=v,...``; "" for none)."""
    selector = op.get("labelSelector") or {}
    if not isinstance(selector, Mapping):
        raise InputError(f"{context.name}: {op_name(op)}.labelSelector: must be a map")
    return ",".join(f"{k}={v}" for k, v in selector.items())


def _names(op: Op, key: str, context: Context) -> tuple[str, ...]:
    """A list-of-names field (none given: empty)."""
    names = op.get(key) or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError(f"{context.name}: {op_name(op)}.{key}: must be a list of names")
    return tuple(names)


def _sleep(op: Op, context: Context) -> SleepOp:
    seconds = op.get("duration")  # (seconds: the config parses the duration)
    if not isinstance(seconds, int | float) or seconds < 0:
        raise InputError(f"{context.name}: {op_name(op)}.duration: needs a duration like 1s")
    return SleepOp(index=op.index, seconds=float(seconds))


def _delete_pods(op: Op, context: Context) -> DeletePodsOp:
    namespace = op.get("namespace")
    if not isinstance(namespace, str) or not namespace:
        raise InputError(f"{context.name}: {op_name(op)}.namespace: required")
    selector = _label_selector(op, context)
    rate = int(op.get("deletePodsPerSecond") or 0)
    if rate < 0:
        raise InputError(
            f"{context.name}: {op_name(op)}.deletePodsPerSecond: must be >= 0, got {rate}"
        )
    return DeletePodsOp(
        index=op.index,
        namespace=namespace,
        label_selector=selector,
        per_second=rate,
        wait=not op.get("skipWaitToCompletion"),
    )


def _create_any(op: Op, context: Context) -> CreateAnyOp:
    path, namespace = _any_fields(op, context)
    return CreateAnyOp(
        index=op.index,
        template=path,
        template_params=op.get("templateParams"),
        count=int(op.get("count", 1)),
        namespace=namespace,
    )


def _update_any(op: Op, context: Context) -> UpdateAnyOp:
    path, namespace = _any_fields(op, context)
    subresources = op.get("subresources") or []
    if not isinstance(subresources, list) or not all(
        isinstance(x, str) and x for x in subresources
    ):
        raise InputError(f"{context.name}: {op_name(op)}.subresources: must be a list of names")
    return UpdateAnyOp(
        index=op.index,
        template=path,
        template_params=op.get("templateParams"),
        count=int(op.get("count", 1)),
        namespace=namespace,
        per_second=int(op.get("updatePerSecond") or 0),
        subresources=tuple(subresources),
    )


def _any_fields(op: Op, context: Context) -> tuple[Path, str]:
    """createAny's and updateAny's template path and namespace ("" for none)."""
    path = op.get("templatePath")
    if path is None:
        raise InputError(f"{context.name}: {op_name(op)}.templatePath: required")
    namespace = op.get("namespace") or ""
    if not isinstance(namespace, str):
        raise InputError(f"{context.name}: {op_name(op)}.namespace: must be a name")
    return Path(path), namespace


def _start_collecting(op: Op, context: Context) -> StartCollectingOp:
    return StartCollectingOp(
        index=op.index,
        namespaces=_names(op, "namespaces", context),
        selects_by_label=bool(op.get("labelSelector")),
    )


def _stop_collecting(op: Op, context: Context) -> StopCollectingOp:
    del context  # (no fields)
    return StopCollectingOp(index=op.index)


#: The opcodes the translation has a way to run, each with its parser; any other opcode
#: is a :class:`RefusedOp`.
_PARSERS: Final[Mapping[str, Callable[[Op, Context], PerfOp]]] = {
    "createNodes": _create_nodes,
    "createNamespaces": _create_namespaces,
    "createPods": _create_pods,
    "createPodSets": _create_pod_sets,
    "churn": _churn,
    "barrier": _barrier,
    "sleep": _sleep,
    "deletePods": _delete_pods,
    "createAny": _create_any,
    "updateAny": _update_any,
    "startCollectingMetrics": _start_collecting,
    "stopCollectingMetrics": _stop_collecting,
}
#: The opcodes :func:`parse` gives a typed op of their own (the others: :class:`RefusedOp`).
TYPED_OPCODES: Final = frozenset(_PARSERS)
