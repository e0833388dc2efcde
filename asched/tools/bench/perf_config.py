"""scheduler_perf's config files (``performance-config.yaml``), parsed and validated.

The format of kubernetes' ``test/integration/scheduler_perf``: a list of test cases, each
with a ``workloadTemplate`` (a list of ops, each named by its ``opcode``) and
``workloads`` whose ``params`` fill the template's ``$name`` parameters::

    - name: SchedulingBasic
      defaultPodTemplatePath: ../templates/pod-default.yaml
      workloadTemplate:
      - opcode: createNodes
        countParam: $initNodes
      - opcode: createPods
        countParam: $measurePods
        collectMetrics: true
      workloads:
      - name: 5Nodes
        labels: [integration-test, short]
        featureGates: {SchedulerQueueingHints: true}
        threshold: 270
        params: {initNodes: 5, measurePods: 10}

:func:`load_config` checks the structure: every test case, workload and op field is one
upstream knows (an unknown opcode or field is an error naming the test case, the op index
and the field, never skipped). :func:`expand` substitutes one workload's parameters into
the template as upstream's ``patchParams`` does (``countParam``, ``countMultiplierParam``,
``durationParam``, ``steadyStateParam``, ``signatureBatchSizeParam``, ``$`` values of
``templateParams``), and fails on an undefined or unused parameter. Template paths
resolve relative to the config file's folder, where upstream's ``go test`` runs.

Whether asched can run the result is :mod:`asched.tools.bench.perf_translate`'s question.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from asched import textfile
from asched.config.schema import describe
from asched.errors import DocumentError, InputError

TEST_CASE_FIELDS: Final = (
    "name",
    "featureGates",
    "metricsCollectorConfig",
    "workloadTemplate",
    "workloads",
    "schedulerConfigPath",
    "defaultPodTemplatePath",
    "labels",
    "defaultThresholdMetricSelector",
)
WORKLOAD_FIELDS: Final = (
    "name",
    "params",
    "labels",
    "threshold",
    "thresholdMetricSelector",
    "featureGates",
)
_CREATE_PODS: Final = (
    "count",
    "countParam",
    "countMultiplierParam",
    "steadyState",
    "steadyStateParam",
    "duration",
    "durationParam",
    "collectMetrics",
    "namespace",
    "podTemplatePath",
    "skipWaitToCompletion",
    "persistentVolumeTemplatePath",
    "persistentVolumeClaimTemplatePath",
    "templateParams",
    "signatureBatchSize",
    "signatureBatchSizeParam",
)
#: Every opcode upstream knows and its fields (besides ``opcode``). None: a dynamic
#: resource allocation op, whose fields are not checked (DRA is refused as a whole).
OPCODES: Final[Mapping[str, tuple[str, ...] | None]] = {
    "createNodes": (
        "count",
        "countParam",
        "nodeTemplatePath",
        "nodeAllocatableStrategy",
        "labelNodePrepareStrategy",
        "uniqueNodeLabelStrategy",
        "templateParams",
    ),
    "createNamespaces": ("prefix", "count", "countParam", "namespaceTemplatePath"),
    "createPods": _CREATE_PODS,
    "createPodSets": ("count", "countParam", "namespacePrefix", "createPodsOp"),
    "deletePods": (
        "namespace",
        "labelSelector",
        "skipWaitToCompletion",
        "deletePodsPerSecond",
    ),
    "churn": ("mode", "number", "intervalMilliseconds", "namespace", "templatePaths"),
    "barrier": ("namespaces", "labelSelector", "stageRequirement"),
    "sleep": ("duration", "durationParam"),
    "startCollectingMetrics": ("name", "namespaces", "labelSelector"),
    "stopCollectingMetrics": (),
    "createAny": ("namespace", "templatePath", "count", "countParam", "templateParams"),
    "updateAny": (
        "namespace",
        "templatePath",
        "count",
        "countParam",
        "templateParams",
        "updatePerSecond",
        "subresources",
    ),
    "createPodGroups": ("namespace", "templatePath", "count", "countParam", "templateParams"),
    "waitForPodGroups": ("namespace", "count", "countParam"),
    "allocResourceClaims": None,
    "createResourceClaims": None,
    "createResourceDriver": None,
}
#: Op fields naming a file (resolved against the config's folder).
PATH_FIELDS: Final = (
    "nodeTemplatePath",
    "namespaceTemplatePath",
    "podTemplatePath",
    "persistentVolumeTemplatePath",
    "persistentVolumeClaimTemplatePath",
    "templatePath",
)
#: Parameter fields that hold an integer: the field they set.
_INT_PARAMS: Final = {
    "countParam": "count",
    "signatureBatchSizeParam": "signatureBatchSize",
}
_DURATION: Final = re.compile(r"^(?:(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns))+$")
_DURATION_PART: Final = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")
_UNITS: Final = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


class PerfConfigError(DocumentError):
    """A scheduler_perf config with problems, each naming the test case, op and field."""

    WHAT = "scheduler_perf config"

    def __init__(self, problems: Sequence[str], source: str = "") -> None:
        self.problems = list(problems)
        super().__init__(self.problems, source)


@dataclass(frozen=True, slots=True)
class Op:
    """One op of a workload template: ``opcode`` and its fields as written (camelCase).

    ``index`` is its position in ``workloadTemplate`` (upstream's op index, which also
    names default namespaces: ``namespace-<index>``).
    """

    index: int
    opcode: str
    fields: Mapping[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


@dataclass(frozen=True, slots=True, kw_only=True)
class PerfWorkload:
    """One workload of a test case: its parameters, labels, threshold and gates.

    ``threshold`` is upstream's minimum ``SchedulingThroughput`` Average (pods/s) for
    this workload (None: no threshold, or 0, which upstream treats as none);
    ``threshold_by_topic`` the per-topic form when the file gives a map.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    threshold: float | None = None
    threshold_by_topic: Mapping[str, float] = field(default_factory=dict)
    threshold_metric: Mapping[str, Any] | None = None
    feature_gates: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class TestCase:
    """One test case: ops shared by its workloads, plus test-case-wide settings."""

    __test__ = False  # not a pytest class

    name: str
    ops: tuple[Op, ...]
    workloads: tuple[PerfWorkload, ...]
    labels: tuple[str, ...] = ()
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    default_pod_template: Path | None = None
    scheduler_config_path: Path | None = None
    metrics_collector_config: Mapping[str, Any] | None = None
    threshold_metric: Mapping[str, Any] | None = None

    def workload(self, name: str) -> PerfWorkload:
        for w in self.workloads:
            if w.name == name:
                return w
        raise KeyError(name)


@dataclass(frozen=True, slots=True, kw_only=True)
class PerfConfig:
    """A parsed config file; ``folder`` is where its relative paths resolve."""

    source: str
    folder: Path
    test_cases: tuple[TestCase, ...]

    def find(self, full_name: str) -> tuple[TestCase, PerfWorkload]:
        """The test case and workload named ``TestCase/Workload``.

        Workload names may contain ``/`` (``5Nodes/1Init/10Pods``): the test case is the
        part before the first ``/``.

        Raises
        ------
        InputError
            No such workload; the message lists the names there are.
        """
        case_name, _, workload_name = full_name.partition("/")
        for case in self.test_cases:
            if case.name == case_name:
                for w in case.workloads:
                    if w.name == workload_name:
                        return case, w
        names = ", ".join(f"{c.name}/{w.name}" for c in self.test_cases for w in c.workloads)
        raise InputError(f"{self.source}: no workload {full_name!r} (workloads: {names})")

    def all(self) -> list[tuple[TestCase, PerfWorkload]]:
        return [(c, w) for c in self.test_cases for w in c.workloads]


def full_name(case: TestCase, workload: PerfWorkload) -> str:
    return f"{case.name}/{workload.name}"


class _Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, where: str, message: str) -> None:
        self.lines.append(f"{where}: {message}")

    def unknown(self, where: str, raw: Mapping[str, Any], known: Sequence[str]) -> None:
        for key in raw:
            if key in known:
                continue
            close = difflib.get_close_matches(str(key), list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.add(f"{where}.{key}", f"unknown field{hint}")


def _strings(problems: _Problems, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add(where, f"must be a list of strings, got {describe(value)}")
        return ()
    return tuple(value)


def _gates(problems: _Problems, where: str, value: Any) -> dict[str, bool]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.add(where, f"must be a map of feature gate to true/false, got {describe(value)}")
        return {}
    out: dict[str, bool] = {}
    for name, on in value.items():
        if not isinstance(on, bool):
            problems.add(f"{where}.{name}", f"must be true or false, got {describe(on)}")
        else:
            out[str(name)] = on
    return out


def _path(folder: Path, value: Any, problems: _Problems, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        problems.add(where, f"must be a file path, got {describe(value)}")
        return None
    return (folder / value).resolve() if not Path(value).is_absolute() else Path(value)


def _threshold(
    problems: _Problems, where: str, value: Any, topic: str
) -> tuple[float | None, dict[str, float]]:
    if value is None:
        return None, {}
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < 0:
            problems.add(where, f"must be >= 0, got {value}")
        return (float(value) if value > 0 else None), {}
    if isinstance(value, Mapping):
        by_topic: dict[str, float] = {}
        for key, number in value.items():
            if isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
                problems.add(f"{where}.{key}", f"must be a number >= 0, got {describe(number)}")
            else:
                by_topic[str(key)] = float(number)
        chosen = by_topic.get(topic)
        return (chosen if chosen else None), by_topic
    problems.add(where, f"must be a number or a map of topic to number, got {describe(value)}")
    return None, {}


def _op(problems: _Problems, case: str, index: int, raw: Any, folder: Path) -> Op | None:
    where = f"{case}: workloadTemplate[{index}]"
    if not isinstance(raw, Mapping):
        problems.add(where, f"must be an op (a map with an opcode), got {describe(raw)}")
        return None
    opcode = raw.get("opcode")
    if not isinstance(opcode, str) or opcode not in OPCODES:
        close = difflib.get_close_matches(str(opcode), list(OPCODES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.add(f"{where}.opcode", f"unknown opcode {opcode!r}{hint}")
        return None
    where = f"{where} ({opcode})"
    known = OPCODES[opcode]
    values = {k: v for k, v in raw.items() if k != "opcode"}
    if known is not None:
        problems.unknown(where, values, known)
        if opcode == "createPodSets" and isinstance(values.get("createPodsOp"), Mapping):
            inner = {k: v for k, v in values["createPodsOp"].items() if k != "opcode"}
            problems.unknown(f"{where}.createPodsOp", inner, _CREATE_PODS)
        _check_values(problems, where, values)
    for key in PATH_FIELDS:
        if key in values:
            values[key] = _path(folder, values[key], problems, f"{where}.{key}")
    if opcode == "churn" and "templatePaths" in values:
        paths = _strings(problems, f"{where}.templatePaths", values["templatePaths"])
        values["templatePaths"] = tuple((folder / p).resolve() for p in paths)
    return Op(index=index, opcode=str(opcode), fields=values)


def _check_values(problems: _Problems, where: str, values: Mapping[str, Any]) -> None:
    """Types of the fields every op shares; parameters start with ``$``."""
    for key, value in values.items():
        if key.endswith("Param"):
            if not isinstance(value, str) or not value.startswith("$") or len(value) < 2:
                problems.add(f"{where}.{key}", f"must be a $parameter, got {describe(value)}")
        elif key in (
            "count",
            "number",
            "intervalMilliseconds",
            "deletePodsPerSecond",
            "updatePerSecond",
            "signatureBatchSize",
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                problems.add(f"{where}.{key}", f"must be an integer >= 0, got {describe(value)}")
        elif key in ("collectMetrics", "skipWaitToCompletion", "steadyState"):
            if not isinstance(value, bool):
                problems.add(f"{where}.{key}", f"must be true or false, got {describe(value)}")
        elif key == "duration" and parse_duration(value) is None:
            problems.add(f"{where}.{key}", f"must be a duration like 10s, got {describe(value)}")
    if values.get("collectMetrics") and values.get("skipWaitToCompletion"):
        problems.add(where, "collectMetrics and skipWaitToCompletion cannot both be true")
    mode = values.get("mode")
    if "mode" in values and mode not in ("create", "recreate"):
        problems.add(f"{where}.mode", f"must be create or recreate, got {describe(mode)}")
    stage = values.get("stageRequirement")
    if stage is not None and stage not in ("Scheduled", "Attempted"):
        problems.add(
            f"{where}.stageRequirement", f"must be Scheduled or Attempted, got {describe(stage)}"
        )


def parse_duration(value: Any) -> float | None:
    """A Go duration string (``10s``, ``1m30s``, ``500ms``) in seconds; None if not one."""
    if not isinstance(value, str) or not _DURATION.match(value):
        return None
    return sum(float(n) * _UNITS[u] for n, u in _DURATION_PART.findall(value))


def _workload(
    problems: _Problems, case: str, index: int, raw: Any, topic: str
) -> PerfWorkload | None:
    where = f"{case}: workloads[{index}]"
    if not isinstance(raw, Mapping):
        problems.add(where, f"must be a workload (a map), got {describe(raw)}")
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        problems.add(f"{where}.name", "required, a string")
        name = f"workloads[{index}]"
    where = f"{case}/{name}"
    problems.unknown(where, raw, WORKLOAD_FIELDS)
    params = raw.get("params") or {}
    if not isinstance(params, Mapping):
        problems.add(f"{where}.params", f"must be a map, got {describe(params)}")
        params = {}
    threshold, by_topic = _threshold(problems, f"{where}.threshold", raw.get("threshold"), topic)
    selector = raw.get("thresholdMetricSelector")
    return PerfWorkload(
        name=name,
        params=dict(params),
        labels=_strings(problems, f"{where}.labels", raw.get("labels")),
        threshold=threshold,
        threshold_by_topic=by_topic,
        threshold_metric=dict(selector) if isinstance(selector, Mapping) else None,
        feature_gates=_gates(problems, f"{where}.featureGates", raw.get("featureGates")),
    )


def _test_case(
    problems: _Problems, index: int, raw: Any, folder: Path, topic: str
) -> TestCase | None:
    if not isinstance(raw, Mapping):
        problems.add(f"[{index}]", f"must be a test case (a map), got {describe(raw)}")
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        problems.add(f"[{index}].name", "required, a string")
        name = f"[{index}]"
    problems.unknown(name, raw, TEST_CASE_FIELDS)
    template = raw.get("workloadTemplate")
    if not isinstance(template, list) or not template:
        problems.add(f"{name}.workloadTemplate", "required: a list of ops")
        template = []
    ops = [_op(problems, name, i, op, folder) for i, op in enumerate(template)]
    workloads_raw = raw.get("workloads")
    if not isinstance(workloads_raw, list) or not workloads_raw:
        problems.add(f"{name}.workloads", "required: a list of workloads")
        workloads_raw = []
    workloads = [_workload(problems, name, i, w, topic) for i, w in enumerate(workloads_raw)]
    seen: set[str] = set()
    for w in workloads:
        if w is not None and w.name in seen:
            problems.add(f"{name}/{w.name}", "workload name is not unique")
        if w is not None:
            seen.add(w.name)
    if template and not any(
        o is not None
        and (
            o.opcode == "stopCollectingMetrics"
            or (o.opcode == "createPods" and o.get("collectMetrics"))
            or (o.opcode == "createPodSets" and (o.get("createPodsOp") or {}).get("collectMetrics"))
        )
        for o in ops
    ):
        problems.add(f"{name}.workloadTemplate", "no op collects metrics")
    selector = raw.get("defaultThresholdMetricSelector")
    mcc = raw.get("metricsCollectorConfig")
    return TestCase(
        name=name,
        ops=tuple(o for o in ops if o is not None),
        workloads=tuple(w for w in workloads if w is not None),
        labels=_strings(problems, f"{name}.labels", raw.get("labels")),
        feature_gates=_gates(problems, f"{name}.featureGates", raw.get("featureGates")),
        default_pod_template=_path(
            folder, raw.get("defaultPodTemplatePath"), problems, f"{name}.defaultPodTemplatePath"
        ),
        scheduler_config_path=_path(
            folder, raw.get("schedulerConfigPath"), problems, f"{name}.schedulerConfigPath"
        ),
        metrics_collector_config=dict(mcc) if isinstance(mcc, Mapping) else None,
        threshold_metric=dict(selector) if isinstance(selector, Mapping) else None,
    )


def load_config(data: Any, *, source: str = "", folder: Path | None = None) -> PerfConfig:
    """Validate a parsed config document.

    ``folder`` is where relative paths resolve (the config file's folder); the threshold
    topic is its name (upstream's ``misc``, ``affinity``...).

    Raises
    ------
    PerfConfigError
        Listing every problem, each naming its test case, op index and field.
    """
    base = folder if folder is not None else Path.cwd()
    problems = _Problems()
    if not isinstance(data, list) or not data:
        raise PerfConfigError(["the file must be a non-empty list of test cases"], source)
    cases = [_test_case(problems, i, raw, base, base.name) for i, raw in enumerate(data)]
    seen: set[str] = set()
    for case in cases:
        if case is not None and case.name in seen:
            problems.add(case.name, "test case name is not unique")
        if case is not None:
            seen.add(case.name)
    if problems.lines:
        raise PerfConfigError(problems.lines, source)
    return PerfConfig(
        source=source, folder=base, test_cases=tuple(c for c in cases if c is not None)
    )


def load_config_file(path: str | Path) -> PerfConfig:
    """Read and validate a config file; its folder resolves the template paths."""
    name = str(path)
    data = textfile.parse_yaml(textfile.read_text(name, "the scheduler_perf config"), name)
    return load_config(data, source=name, folder=Path(path).resolve().parent)


def looks_like_config(path: str | Path) -> bool:
    """True when ``path`` is a YAML file whose document is a list (upstream's format);
    asched's own workload files are maps."""
    candidate = Path(path)
    if not candidate.is_file():
        return False
    try:
        data = textfile.parse_yaml(textfile.read_text(str(candidate), "the workload"), str(path))
    except InputError:
        return False
    return isinstance(data, list)


class _Params:
    """A workload's parameters, recording which ones were used."""

    def __init__(self, where: str, params: Mapping[str, Any]) -> None:
        self.where = where
        self.params = params
        self.used: set[str] = set()

    def get(self, op_where: str, key: str, reference: str, kind: type) -> Any:
        name = reference[1:]
        self.used.add(name)
        if name not in self.params:
            raise PerfConfigError([f"{op_where}.{key}: parameter {name} is undefined"])
        value = self.params[name]
        if kind is int:
            # upstream decodes params as JSON numbers (float64) and truncates to int
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise PerfConfigError(
                    [f"{op_where}.{key}: parameter {name} must be a number, got {describe(value)}"]
                )
            return int(value)
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise PerfConfigError(
                [
                    f"{op_where}.{key}: parameter {name} must be a {kind.__name__}, "
                    f"got {describe(value)}"
                ]
            )
        return value


def expand(case: TestCase, workload: PerfWorkload) -> tuple[Op, ...]:
    """The test case's ops with ``workload``'s parameters substituted (upstream's
    ``patchParams``): ``count`` from ``countParam`` (times ``countMultiplierParam``),
    ``duration`` (seconds) from ``durationParam``, ``steadyState`` from
    ``steadyStateParam``, ``$`` values of ``templateParams``. Every op then has an integer
    ``count`` where it takes one (createAny: 1 by default).

    Raises
    ------
    PerfConfigError
        A parameter is undefined, of the wrong type, or defined but never used.
    """
    name = full_name(case, workload)
    params = _Params(name, workload.params)
    out: list[Op] = []
    for op in case.ops:
        where = f"{name}: workloadTemplate[{op.index}] ({op.opcode})"
        values = dict(op.fields)
        if op.opcode == "createPodSets" and isinstance(values.get("createPodsOp"), Mapping):
            values["createPodsOp"] = _substitute(where, dict(values["createPodsOp"]), params)
        out.append(Op(op.index, op.opcode, _substitute(where, values, params)))
    unused = sorted(set(workload.params) - params.used)
    if unused:
        raise PerfConfigError([f"{name}.params: {', '.join(unused)} defined but unused (a typo?)"])
    return tuple(out)


def _substitute(where: str, values: dict[str, Any], params: _Params) -> dict[str, Any]:
    for key, target in _INT_PARAMS.items():
        if key in values:
            values[target] = params.get(where, key, values.pop(key), int)
    if "countMultiplierParam" in values:
        multiplier = params.get(
            where, "countMultiplierParam", values.pop("countMultiplierParam"), int
        )
        values["count"] = int(values.get("count", 0)) * multiplier
    if "durationParam" in values:
        text = params.get(where, "durationParam", values.pop("durationParam"), str)
        seconds = parse_duration(text)
        if seconds is None:
            raise PerfConfigError([f"{where}.durationParam: not a duration {text!r}"])
        values["duration"] = seconds
    elif "duration" in values:
        values["duration"] = parse_duration(values["duration"])
    if "steadyStateParam" in values:
        values["steadyState"] = params.get(
            where, "steadyStateParam", values.pop("steadyStateParam"), bool
        )
    template_params = values.get("templateParams")
    if isinstance(template_params, Mapping):
        resolved = {}
        for key, value in template_params.items():
            if isinstance(value, str) and value.startswith("$"):
                name = value[1:]
                params.used.add(name)
                if name not in params.params:
                    raise PerfConfigError(
                        [f"{where}.templateParams.{key}: parameter {name} is undefined"]
                    )
                resolved[key] = params.params[name]
            else:
                resolved[key] = value
        values["templateParams"] = resolved
    return values


def enabled(selectors: Sequence[str], labels: Sequence[str]) -> bool:
    """Upstream's label filter: every plain (or ``+``) selector must be among ``labels``,
    no ``-`` selector may be; empty selectors are ignored."""
    have = set(labels)
    for selector in selectors:
        selector = selector.strip()
        if not selector:
            continue
        if selector.startswith("-"):
            if selector[1:] in have:
                return False
        elif selector.removeprefix("+") not in have:
            return False
    return True
