"""Upstream scheduler_perf configs: the parser's error paths, parameters and label filter.

Configs are written here in upstream's format (tests/tools/bench/data/perf); no upstream file
is copied.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from asched.tools.bench import perf_config
from asched.tools.bench.perf_config import PerfConfigError, expand, load_config, load_config_file

DATA = Path(__file__).resolve().parent / "data" / "perf"
MISC = DATA / "misc"


def basic() -> list[dict[str, Any]]:
    """SchedulingBasic's shape, as upstream writes it."""
    return [
        {
            "name": "SchedulingBasic",
            "defaultPodTemplatePath": "../templates/pod-default.yaml",
            "workloadTemplate": [
                {"opcode": "createNodes", "countParam": "$initNodes"},
                {"opcode": "createPods", "countParam": "$initPods"},
                {"opcode": "createPods", "countParam": "$measurePods", "collectMetrics": True},
            ],
            "workloads": [
                {
                    "name": "5Nodes",
                    "labels": ["integration-test", "short"],
                    "params": {"initNodes": 5, "initPods": 5, "measurePods": 10},
                }
            ],
        }
    ]


def with_change(path: tuple[Any, ...], value: Any) -> list[dict[str, Any]]:
    """``basic()`` with the value at ``path`` replaced (a new key or list element when absent)."""
    doc: Any = copy.deepcopy(basic())
    target = doc
    for key in path[:-1]:
        target = target[key]
    if isinstance(target, list) and path[-1] == len(target):
        target.append(value)
    else:
        target[path[-1]] = value
    return list(doc)


def problems_of(data: Any) -> list[str]:
    with pytest.raises(PerfConfigError) as caught:
        load_config(data, source="cfg.yaml", folder=MISC)
    return caught.value.problems


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            with_change((0, "workloadTemplate", 0, "opcode"), "createNode"),
            "SchedulingBasic: workloadTemplate[0].opcode: unknown opcode 'createNode' "
            "(did you mean 'createNodes'?)",
            id="unknown-opcode",
        ),
        pytest.param(
            with_change((0, "workloadTemplate", 1, "podTemplatePth"), "x.yaml"),
            "SchedulingBasic: workloadTemplate[1] (createPods).podTemplatePth: unknown field "
            "(did you mean 'podTemplatePath'?)",
            id="unknown-op-field",
        ),
        pytest.param(
            with_change((0, "workloads", 0, "treshold"), 10),
            "SchedulingBasic/5Nodes.treshold: unknown field (did you mean 'threshold'?)",
            id="unknown-workload-field",
        ),
        pytest.param(
            with_change((0, "defaultPodTemplate"), "x.yaml"),
            "SchedulingBasic.defaultPodTemplate: unknown field "
            "(did you mean 'defaultPodTemplatePath'?)",
            id="unknown-test-case-field",
        ),
        pytest.param(
            with_change((0, "workloadTemplate", 2, "collectMetrics"), False),
            "SchedulingBasic.workloadTemplate: no op collects metrics",
            id="nothing-measured",
        ),
        pytest.param(
            with_change((0, "workloadTemplate", 2, "skipWaitToCompletion"), True),
            "SchedulingBasic: workloadTemplate[2] (createPods): collectMetrics and "
            "skipWaitToCompletion cannot both be true",
            id="collect-and-skip",
        ),
        pytest.param(
            with_change((0, "workloadTemplate", 0), {"opcode": "createNodes", "count": -1}),
            "SchedulingBasic: workloadTemplate[0] (createNodes).count: must be an integer >= 0, "
            "got -1",
            id="negative-count",
        ),
        pytest.param(
            with_change((0, "workloadTemplate", 0, "countParam"), "initNodes"),
            "SchedulingBasic: workloadTemplate[0] (createNodes).countParam: must be a "
            "$parameter, got 'initNodes'",
            id="param-without-dollar",
        ),
        pytest.param(
            with_change((0, "workloadTemplate", 0), {"opcode": "sleep", "duration": "soon"}),
            "SchedulingBasic: workloadTemplate[0] (sleep).duration: must be a duration like "
            "10s, got 'soon'",
            id="bad-duration",
        ),
        pytest.param(
            with_change((0, "workloads", 0, "threshold"), "fast"),
            "SchedulingBasic/5Nodes.threshold: must be a number or a map of topic to number, "
            "got 'fast'",
            id="bad-threshold",
        ),
        pytest.param(
            with_change((0, "workloads", 0, "featureGates"), {"SchedulerQueueingHints": "on"}),
            "SchedulingBasic/5Nodes.featureGates.SchedulerQueueingHints: must be true or "
            "false, got 'on'",
            id="bad-gate-value",
        ),
        pytest.param(
            with_change((0, "workloads", 1), {"name": "5Nodes", "params": {}}),
            "SchedulingBasic/5Nodes: workload name is not unique",
            id="duplicate-workload",
        ),
        pytest.param(
            with_change((0, "workloadTemplate", 0), {"opcode": "churn", "mode": "sometimes"}),
            "SchedulingBasic: workloadTemplate[0] (churn).mode: must be create or recreate, "
            "got 'sometimes'",
            id="bad-churn-mode",
        ),
        pytest.param(
            {"name": "SchedulingBasic"},
            "the file must be a non-empty list of test cases",
            id="not-a-list",
        ),
    ],
)
def test_config_errors_name_the_test_case_op_and_field(data: Any, expected: str) -> None:
    assert expected in problems_of(data)


def test_every_problem_is_reported_at_once() -> None:
    data = with_change((0, "workloadTemplate", 1, "podTemplatePth"), "x.yaml")
    data[0]["workloads"][0]["treshold"] = 1
    assert len(problems_of(data)) == 2


def test_the_test_config_parses_and_paths_resolve_against_its_folder() -> None:
    config = load_config_file(MISC / "performance-config.yaml")
    case, workload = config.find("TopologySpreading/5Nodes")
    assert [op.opcode for op in case.ops] == ["createNodes", "createPods", "createPods"]
    assert case.ops[0].get("nodeTemplatePath") == DATA / "templates" / "node-default.yaml"
    assert workload.threshold == 85.0
    assert workload.feature_gates == {"SchedulerQueueingHints": True}
    assert workload.labels == ("integration-test", "short")


def test_find_names_the_workloads_there_are() -> None:
    config = load_config_file(MISC / "performance-config.yaml")
    with pytest.raises(perf_config.InputError, match="SchedulingBasic/5Nodes"):
        config.find("SchedulingBasic/6Nodes")


@pytest.mark.parametrize(
    ("threshold", "folder", "expected"),
    [
        pytest.param(270, MISC, 270.0, id="number"),
        pytest.param(0, MISC, None, id="zero-is-none-as-upstream"),
        pytest.param({"misc": 120, "other": 5}, MISC, 120.0, id="topic-is-the-folder"),
        pytest.param({"other": 5}, MISC, None, id="no-entry-for-this-topic"),
    ],
)
def test_threshold(threshold: Any, folder: Path, expected: float | None) -> None:
    config = load_config(with_change((0, "workloads", 0, "threshold"), threshold), folder=folder)
    assert config.test_cases[0].workloads[0].threshold == expected


def expanded(data: list[dict[str, Any]]) -> tuple[perf_config.Op, ...]:
    config = load_config(data, folder=MISC)
    case = config.test_cases[0]
    return expand(case, case.workloads[0])


def test_count_params_are_substituted() -> None:
    ops = expanded(basic())
    # initNodes 5, initPods 5, measurePods 10
    assert [op.get("count") for op in ops] == [5, 5, 10]
    assert all("countParam" not in op.fields for op in ops)


def test_count_multiplier_and_duration_params() -> None:
    data = basic()
    data[0]["workloadTemplate"][2].update(count=0, countMultiplierParam="$groups")
    data[0]["workloadTemplate"][2]["countParam"] = "$perGroup"
    data[0]["workloadTemplate"].insert(2, {"opcode": "sleep", "durationParam": "$pause"})
    data[0]["workloads"][0]["params"] = {
        "initNodes": 5,
        "initPods": 5,
        "perGroup": 4,
        "groups": 3,
        "pause": "1m30s",
    }
    ops = expanded(data)
    assert ops[3].get("count") == 12  # 4 pods per group x 3 groups
    assert ops[2].get("duration") == 90.0  # 1 min + 30 s


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        pytest.param(
            {"initNodes": 5, "initPods": 5},
            "SchedulingBasic/5Nodes: workloadTemplate[2] (createPods).countParam: parameter "
            "measurePods is undefined",
            id="undefined",
        ),
        pytest.param(
            {"initNodes": 5, "initPods": 5, "measurePods": 10, "measurPods": 10},
            "SchedulingBasic/5Nodes.params: measurPods defined but unused (a typo?)",
            id="unused",
        ),
        pytest.param(
            {"initNodes": "five", "initPods": 5, "measurePods": 10},
            "SchedulingBasic/5Nodes: workloadTemplate[0] (createNodes).countParam: parameter "
            "initNodes must be a number, got 'five'",
            id="wrong-type",
        ),
    ],
)
def test_parameter_errors(params: dict[str, Any], expected: str) -> None:
    with pytest.raises(PerfConfigError) as caught:
        expanded(with_change((0, "workloads", 0, "params"), params))
    assert caught.value.problems == [expected]


@pytest.mark.parametrize(
    ("selectors", "labels", "expected"),
    [
        pytest.param(["integration-test", "short"], ["integration-test", "short"], True, id="all"),
        pytest.param(["integration-test", "short"], ["integration-test"], False, id="missing"),
        pytest.param(["integration-test", "-performance"], ["integration-test"], True, id="not"),
        pytest.param(["-performance"], ["performance", "short"], False, id="excluded"),
        pytest.param(["+short"], ["short"], True, id="plus"),
        pytest.param([""], [], True, id="empty-filter"),
    ],
)
def test_label_filter(selectors: list[str], labels: list[str], expected: bool) -> None:
    assert perf_config.enabled(selectors, labels) is expected


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("10s", 10.0, id="s"),
        pytest.param("500ms", 0.5, id="ms"),
        pytest.param("1m30s", 90.0, id="m-s"),
        pytest.param("1h", 3600.0, id="h"),
        pytest.param("ten", None, id="bad"),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert perf_config.parse_duration(text) == seconds
