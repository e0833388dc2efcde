"""deploy/grafana/asched.json queries only what asched exports, with labels it has.

A dashboard that names a metric asched does not export (a typo, a renamed metric, a
label that does not exist) shows an empty panel with no error at all; these tests turn
that into a failure. The exported names come from :data:`asched.metrics.REGISTRY`.

docs/metrics.md's table is held to the same registry: every documented metric is exported
with its documented type, every exported one is documented, and the dashboard shows each
(tests/integration/test_metrics_live.py shows each one moving in a live run).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.metrics import MetricWrapperBase

from asched import metrics
from tests.metrics_doc import documented_metrics

DASHBOARD = Path(__file__).resolve().parents[3] / "deploy" / "grafana" / "asched.json"
#: labels Prometheus adds to every scraped series (the target's), not asched's own
TARGET_LABELS = frozenset({"instance", "job"})
#: a metric name in a PromQL expression (every asched series starts with the prefix)
METRIC = re.compile(r"\b(asched_[a-z0-9_]+)")
#: ``name{label op "value", ...}``: the label matchers of a selector
SELECTOR = re.compile(r"\b(asched_[a-z0-9_]+)\{([^}]*)\}")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
#: ``by (a, b)`` groupings
BY = re.compile(r"\bby\s*\(([^)]*)\)")


def _exported() -> dict[str, frozenset[str]]:
    """Every series name asched exports -> its label names (``le`` for buckets)."""
    series: dict[str, frozenset[str]] = {}
    for family in metrics.REGISTRY.collect():
        # the wrapper objects know their label names even before any child exists
        wrapper = next(
            w
            for w in vars(metrics).values()
            if isinstance(w, MetricWrapperBase) and w._name == family.name
        )
        labels = frozenset(wrapper._labelnames)
        if family.type == "counter":
            series[f"{family.name}_total"] = labels
        elif family.type == "histogram":
            series[f"{family.name}_bucket"] = labels | {"le"}
            series[f"{family.name}_sum"] = labels
            series[f"{family.name}_count"] = labels
        else:
            series[family.name] = labels
    return series


def _dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def _expressions() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every target, plus the template variables' queries."""
    dash = _dashboard()
    found = [
        (panel["title"], target["expr"])
        for panel in dash["panels"]
        for target in panel.get("targets", ())
    ]
    found += [
        (f"${variable['name']}", variable["definition"])
        for variable in dash["templating"]["list"]
        if variable["type"] == "query"
    ]
    return found


def test_every_queried_metric_is_exported_with_the_labels_used() -> None:
    exported = _exported()
    problems = []
    for title, expr in _expressions():
        problems += [
            f"{title}: {name} is not exported"
            for name in METRIC.findall(expr)
            if name not in exported
        ]
        for name, matchers in SELECTOR.findall(expr):
            known = exported.get(name, frozenset()) | TARGET_LABELS
            problems += [
                f"{title}: {name} has no label {label!r}"
                for label in MATCHER.findall(matchers)
                if label not in known
            ]
        names = set(METRIC.findall(expr))
        labels = [part.strip() for grouping in BY.findall(expr) for part in grouping.split(",")]
        problems += [
            f"{title}: no metric of the expression has label {label!r}"
            for label in labels
            if not any(label in exported.get(n, frozenset()) | TARGET_LABELS for n in names)
        ]
    assert problems == []


@pytest.mark.parametrize(
    ("what", "series"),
    [
        pytest.param("throughput", "asched_schedule_attempts_total", id="throughput"),
        pytest.param("attempts by result", "asched_schedule_attempts_total", id="attempts"),
        pytest.param(
            "latency percentiles",
            "asched_scheduling_attempt_duration_seconds_bucket",
            id="attempt latency",
        ),
        pytest.param(
            "latency percentiles", "asched_pod_scheduling_sli_duration_seconds_bucket", id="sli"
        ),
        pytest.param("queue depths", "asched_pending_pods", id="queues"),
        pytest.param(
            "extension points",
            "asched_framework_extension_point_duration_seconds_bucket",
            id="extension points",
        ),
        pytest.param("binds in flight", "asched_binds_inflight", id="binds in flight"),
    ],
)
def test_the_issue_s_panels_are_there(what: str, series: str) -> None:
    # what the dashboard promises in docs/metrics.md: each is queried by some panel
    assert any(series in expr for _title, expr in _expressions()), what


def test_a_misspelt_metric_would_be_caught() -> None:
    # the check above is only worth something if it can fail: a renamed series is unknown
    assert "asched_schedule_attempt_total" not in _exported()
    assert "asched_pending_pods" in _exported()
    assert "queue" in _exported()["asched_pending_pods"]


def test_panels_are_well_formed() -> None:
    dash = _dashboard()
    ids = [panel["id"] for panel in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in dash["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] >= 0, panel["title"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] != "row":
            assert panel["targets"], panel["title"]
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
    assert dash["uid"] == "asched-overview"


def test_every_documented_metric_is_exported_and_every_exported_one_is_documented() -> None:
    documented = {row.name: row.kind for row in documented_metrics()}
    # prometheus-client names a counter's family without its _total suffix
    exported = {
        f"{family.name}_total" if family.type == "counter" else family.name: family.type
        for family in metrics.REGISTRY.collect()
    }
    assert documented == exported
    assert len(documented) == 17  # the table's rows today; a new row needs a mover too


def test_the_dashboard_shows_every_documented_metric() -> None:
    queried = {name for _title, expr in _expressions() for name in METRIC.findall(expr)}
    missing = [
        row.name
        for row in documented_metrics()
        if not queried & {row.name, f"{row.name}_bucket", f"{row.name}_sum", f"{row.name}_count"}
    ]
    assert missing == []


HEAD = "| asched metric | Type | Labels |\n|---|---|---|\n"


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        pytest.param(HEAD + "| asched_leader | gauge | |\n", "names no metric", id="no backticks"),
        pytest.param(HEAD + "| `asched_leader` | summary | |\n", "is not one of", id="bad type"),
        pytest.param(HEAD, "has no rows", id="empty table"),
        pytest.param("| Row | Panels |\n|---|---|\n", "has no table", id="no table"),
    ],
)
def test_a_table_the_tests_cannot_read_fails(table: str, problem: str) -> None:
    # the checks above read the table: a row they could not read must not pass as no row
    with pytest.raises(ValueError, match=problem):
        documented_metrics(table)


def test_the_table_reader_reads_a_row_and_stops_after_the_table() -> None:
    text = HEAD + "| `asched_leader` | gauge (0/1) | |\n\nNotes:\n| `asched_x` | counter |\n"
    [row] = documented_metrics(text)
    assert (row.name, row.kind, row.series) == ("asched_leader", "gauge", "asched_leader")
