"""The runtime enforces the plugin array contract; the in-tree declarations match the classes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.config.plugins import DEFAULT_MULTIPOINT
from asched.config.types import ResolvedPlugins
from asched.errors import PluginContractError
from asched.framework.contain import PluginFailure
from asched.framework.cycle_state import CycleState
from asched.framework.registry import IN_TREE, in_tree
from asched.framework.runtime import Framework
from asched.framework.spec import declare
from asched.framework.status import Status
from asched.tools.bench import templates
from tests.configs import default_config

METHODS = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "sort_key",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}


def test_in_tree_declarations_match_the_built_plugins() -> None:
    registry = in_tree()
    assert {name for name, _ in DEFAULT_MULTIPOINT} <= set(registry.specs)
    assert len(registry.specs) == len(IN_TREE)  # no name declared twice
    for spec in IN_TREE:
        plugin = spec(None, None)
        assert plugin.name == spec.name
        for point in spec.points:
            assert callable(getattr(plugin, METHODS[point], None)), f"{spec.name} lacks {point}"


class BadFilter:
    name = "BadFilter"
    row_local = True

    def __init__(self, result: np.ndarray) -> None:
        self.result = result

    def filter(self, state, pod, table, rows):
        return self.result

    def explain(self, state, pod, table, row):
        return Status.unschedulable("bad")


class BadScore:
    name = "BadScore"
    row_local = True
    normalizes = False

    def score(self, state, pod, table, rows):
        return np.array([150, 10], dtype=np.int64)

    def normalize(self, state, scores, taking_part):
        return scores


def two_nodes() -> NodeTable:
    table = NodeTable()
    table.upsert_node(decode_node(templates.node("a")))
    table.upsert_node(decode_node(templates.node("b")))
    return table


@pytest.mark.parametrize(
    "result",
    [
        pytest.param(np.ones(2, dtype=np.int64), id="int mask"),
        pytest.param(np.ones(3, dtype=np.bool_), id="wrong length"),
    ],
)
def test_bad_filter_result_is_a_contract_error(result: np.ndarray) -> None:
    profile = dataclasses.replace(
        default_config().profiles[0], resolved=ResolvedPlugins(filter=("BadFilter",))
    )
    spec = declare(BadFilter, api_version="1.0", factory=lambda args, handle: BadFilter(result))
    framework = Framework(profile, registry=in_tree().adding(spec))
    pod = decode_pod(templates.pod("p"))
    with pytest.raises(PluginContractError, match="BadFilter"):
        framework.filter_mask(CycleState(), pod, two_nodes(), slice(0, 2), framework.filter)


def test_score_out_of_range_is_a_contract_error() -> None:
    profile = dataclasses.replace(
        default_config().profiles[0], resolved=ResolvedPlugins(score=(("BadScore", 1),))
    )
    framework = Framework(profile, registry=in_tree().adding(declare(BadScore, api_version="1.0")))
    plugin = framework.score[0][0]
    raw = framework.run_score(
        plugin, CycleState(), decode_pod(templates.pod("p")), two_nodes(), slice(0, 2)
    )
    with pytest.raises(PluginContractError, match=r"\[10, 150\], expected \[0, 100\]"):
        framework.normalized(plugin, CycleState(), raw, np.ones(2, dtype=np.bool_))


class Misexplaining:
    """Rejects every row; explains with ``answer`` (one row at a time, or ``rows`` at once)."""

    name = "Misexplaining"
    row_local = True

    def __init__(self, answer: object, rows: object = None) -> None:
        self.answer = answer
        self.rows = rows
        if rows is not None:
            self.explain_rows = lambda state, pod, table, rows: self.rows

    def filter(self, state, pod, table, rows):
        return np.zeros(len(table.alive[rows]), dtype=np.bool_)

    def explain(self, state, pod, table, row):
        return self.answer


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        pytest.param(
            Misexplaining("node is in maintenance"),
            "plugin 'Misexplaining' explain returned str, expected Status "
            "(e.g. Status.unschedulable(reason))",
            id="explain returns a string",
        ),
        pytest.param(
            Misexplaining(None),
            "plugin 'Misexplaining' explain returned NoneType, expected Status "
            "(e.g. Status.unschedulable(reason))",
            id="explain returns None",
        ),
        pytest.param(
            Misexplaining(Status.unschedulable("x"), rows=[Status.unschedulable("x")]),
            "plugin 'Misexplaining' explain_rows returned list (1 values), "
            "expected a list of 2 Status",
            id="explain_rows answers one row of two",
        ),
        pytest.param(
            Misexplaining(Status.unschedulable("x"), rows=["a", "b"]),
            "plugin 'Misexplaining' explain_rows returned a str among its answers, expected Status",
            id="explain_rows answers strings",
        ),
        pytest.param(
            Misexplaining(Status.unschedulable("x"), rows=iter(())),
            "plugin 'Misexplaining' explain_rows returned tuple_iterator (no list), "
            "expected a list of 2 Status",
            id="explain_rows answers an iterator",
        ),
    ],
)
def test_a_wrong_explanation_is_a_contract_error_naming_the_plugin(
    plugin: Misexplaining, message: str
) -> None:
    profile = dataclasses.replace(
        default_config().profiles[0], resolved=ResolvedPlugins(filter=("Misexplaining",))
    )
    spec = declare(Misexplaining, api_version="1.0", factory=lambda args, handle: plugin)
    framework = Framework(profile, registry=in_tree().adding(spec))
    pod = decode_pod(templates.pod("p"))
    state = CycleState()
    outcome = framework.run_pre_filter(state, pod, two_nodes())
    with pytest.raises(PluginContractError) as caught:
        framework.first_failures(state, pod, two_nodes(), outcome)
    assert str(caught.value) == message


def test_statuses_explained_are_tagged_with_the_plugin() -> None:
    profile = dataclasses.replace(
        default_config().profiles[0], resolved=ResolvedPlugins(filter=("Misexplaining",))
    )
    plugin = Misexplaining(Status.unresolvable("node(s) are in maintenance"))
    spec = declare(Misexplaining, api_version="1.0", factory=lambda args, handle: plugin)
    framework = Framework(profile, registry=in_tree().adding(spec))
    pod = decode_pod(templates.pod("p"))
    state = CycleState()
    table = two_nodes()
    failures = framework.first_failures(
        state, pod, table, framework.run_pre_filter(state, pod, table)
    )
    wanted = Status.unresolvable("node(s) are in maintenance", plugin="Misexplaining")
    assert failures == {0: wanted, 1: wanted}


class Raising(Misexplaining):
    """Rejects every row; explaining a rejection raises (a plugin bug)."""

    name = "Raising"

    def explain(self, state, pod, table, row):
        raise ValueError("explain bug")


def framework_with(*plugins: Misexplaining) -> Framework:
    """The default profile with only ``plugins`` as its filters, in that order."""
    names = tuple(p.name for p in plugins)
    profile = dataclasses.replace(
        default_config().profiles[0], resolved=ResolvedPlugins(filter=names)
    )
    registry = in_tree()
    for plugin in plugins:
        registry = registry.adding(
            declare(type(plugin), api_version="1.0", factory=lambda args, handle, p=plugin: p)
        )
    return Framework(profile, registry=registry)


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param(
            (Misexplaining(Status.unresolvable("in maintenance")),),
            Status.unresolvable("in maintenance", plugin="Misexplaining"),
            id="the rejecting filter's explanation, tagged with its name",
        ),
        pytest.param((), Status.success(), id="no filter rejects: success"),
    ],
)
def test_first_failure_of_one_row(plugins: tuple[Misexplaining, ...], expected: Status) -> None:
    framework = framework_with(*plugins)
    pod, state, table = decode_pod(templates.pod("p")), CycleState(), two_nodes()
    framework.run_pre_filter(state, pod, table)
    assert framework.first_failure(state, pod, table, 1) == expected


def test_first_failure_names_a_plugin_whose_explain_raises() -> None:
    # the one rule the nominated-pods check and the preemption trials share: a raising
    # explain is that plugin's failure at Filter, not the caller's ("decide")
    framework = framework_with(Raising(None))
    pod, state, table = decode_pod(templates.pod("p")), CycleState(), two_nodes()
    framework.run_pre_filter(state, pod, table)
    with pytest.raises(PluginFailure) as caught:
        framework.first_failure(state, pod, table, 0)
    assert (caught.value.point, caught.value.plugin) == ("Filter", "Raising")
    assert str(caught.value) == "Filter of plugin Raising: ValueError: explain bug"
