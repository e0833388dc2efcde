"""Installed plugins: discovery through entry points, load errors, declarations, config.

Entry points are built by hand (``importlib.metadata.EntryPoint``) over the modules in
``tests/plugin_fixtures``, exactly as an installed distribution's would be read.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint
from typing import Any

import numpy as np
import pytest

from asched.config.load import load_config
from asched.errors import ConfigError, PluginLoadError
from asched.framework.registry import GROUP, discover
from asched.framework.spec import declare
from asched.framework.status import Status

FIXTURES = "tests.plugin_fixtures"


def entry(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=f"{FIXTURES}.{value}", group=GROUP)


def test_an_installed_plugin_joins_the_in_tree_ones() -> None:
    registry = discover([entry("Quarantine", "good:PLUGIN")])
    spec = registry["Quarantine"]
    assert spec.points == frozenset({"filter"})
    assert spec.origin == "an unknown distribution"  # hand-made: no distribution behind it
    assert spec.source == f"{FIXTURES}.good:PLUGIN"
    assert "NodeResourcesFit" in registry
    assert registry.broken == {}


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        pytest.param(
            "Missing",
            "broken_import:PLUGIN",
            f"{FIXTURES}.broken_import:PLUGIN failed to import: ModuleNotFoundError: "
            "No module named 'asched_no_such_dependency'",
            id="import fails",
        ),
        pytest.param(
            "Quarantine",
            "good:NOT_A_DECLARATION",
            f"{FIXTURES}.good:NOT_A_DECLARATION is a type, not a plugin declaration "
            "(make it with asched.plugin.declare)",
            id="not a declaration",
        ),
        pytest.param(
            "Isolation",
            "good:PLUGIN",
            f"the entry point is named 'Isolation' but {FIXTURES}.good:PLUGIN declares "
            "'Quarantine'",
            id="names disagree",
        ),
        pytest.param(
            "NodeResourcesFit",
            "good:PLUGIN",
            "the name is already taken by in-tree",
            id="an in-tree name",
        ),
        pytest.param(
            "FromTheFuture",
            "newer_api:PLUGIN",
            "plugin 'FromTheFuture' was built for asched plugin API 2.0, but this asched "
            "provides API 1.5: install a release of the plugin built for API 1.x (or an "
            "asched that provides 2.0)",
            id="incompatible API version",
        ),
    ],
)
def test_an_unusable_entry_point_is_recorded_with_its_reason(name, value, problem) -> None:
    registry = discover([entry(name, value)])
    assert registry.broken == {name: f"{problem} (an unknown distribution)"}
    assert name not in registry or registry[name].origin == "in-tree"


def document(plugins: dict[str, Any], config: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": plugins, "pluginConfig": config or []}],
    }


QUARANTINE = {"multiPoint": {"enabled": [{"name": "Quarantine"}]}}


def test_a_profile_enables_it_by_name_with_args() -> None:
    registry = discover([entry("Quarantine", "good:PLUGIN")])
    config = load_config(
        document(QUARANTINE, [{"name": "Quarantine", "args": {"label": "x/y"}}]),
        catalogue=registry.catalogue,
    )
    profile = config.profiles[0]
    assert profile.resolved.filter[-1] == "Quarantine"  # after the defaults, as upstream
    assert profile.args("Quarantine").label == "x/y"


@pytest.mark.parametrize(
    ("entries", "data", "errors"),
    [
        pytest.param(
            [entry("FromTheFuture", "newer_api:PLUGIN")],
            document({"preEnqueue": {"enabled": [{"name": "FromTheFuture"}]}}),
            [
                'profiles[0].plugins.preEnqueue.enabled[0].name: plugin "FromTheFuture" is '
                "installed but cannot be loaded: plugin 'FromTheFuture' was built for asched "
                "plugin API 2.0, but this asched provides API 1.5: install a release of the "
                "plugin built for API 1.x (or an asched that provides 2.0) (an unknown "
                "distribution)"
            ],
            id="a broken plugin named",
        ),
        pytest.param(
            [entry("Quarantine", "good:PLUGIN")],
            document(QUARANTINE, [{"name": "Quarantine", "args": {"label": "", "lable": 1}}]),
            [
                "profiles[0].pluginConfig[0].args.lable: unknown field",
                "profiles[0].pluginConfig[0].args.label: must not be empty",
            ],
            id="bad args, with the user's paths",
        ),
        pytest.param(
            [entry("Quarantine", "good:PLUGIN")],
            document({"score": {"enabled": [{"name": "Quarantine"}]}}),
            [
                'profiles[0].plugins.score.enabled[0].name: plugin "Quarantine" does not '
                "implement score (it implements: filter)"
            ],
            id="at a point it does not implement",
        ),
    ],
)
def test_config_errors(entries, data, errors) -> None:
    registry = discover(entries)
    with pytest.raises(ConfigError) as caught:
        load_config(data, catalogue=registry.catalogue)
    assert [str(e) for e in caught.value.errors] == errors


def test_an_unknown_name_lists_the_installed_plugins() -> None:
    registry = discover([entry("Quarantine", "good:PLUGIN")])
    with pytest.raises(ConfigError) as caught:
        load_config(
            document({"filter": {"enabled": [{"name": "Quarantin"}]}}), catalogue=registry.catalogue
        )
    (error,) = caught.value.errors
    assert error.message.startswith(
        'unknown plugin "Quarantin" (installed plugins: Coscheduling, DefaultBinder,'
    )
    assert "Quarantine" in error.message


# ---------------------------------------------------------------- declarations
class Explaining:
    name = "Explaining"
    row_local = True

    def filter(self, state, pod, nodes, rows):
        return np.ones(1, dtype=np.bool_)

    def explain(self, state, pod, nodes, row):
        return Status.unschedulable("no")


class FilterWithoutExplain:
    name = "FilterWithoutExplain"
    row_local = True

    def filter(self, state, pod, nodes, rows):
        return np.ones(1, dtype=np.bool_)


class ScoreWithoutNormalize:
    name = "ScoreWithoutNormalize"
    row_local = True
    normalizes = False

    def score(self, state, pod, nodes, rows):
        return np.zeros(1, dtype=np.int64)


class BothForms(Explaining):
    name = "BothForms"

    def filter_node(self, state, pod, node):
        return Status.success()


class Nameless:
    def post_bind(self, state, pod, node):
        return None


class Nothing:
    name = "Nothing"


@pytest.mark.parametrize(
    ("plugin_type", "kwargs", "message"),
    [
        pytest.param(
            FilterWithoutExplain,
            {},
            "plugin 'FilterWithoutExplain' implements filter but lacks explain",
            id="filter without explain",
        ),
        pytest.param(
            ScoreWithoutNormalize,
            {},
            "plugin 'ScoreWithoutNormalize' implements score but lacks normalize",
            id="score without normalize",
        ),
        pytest.param(
            BothForms,
            {},
            "plugin 'BothForms' defines both filter and filter_node: keep one",
            id="both forms",
        ),
        pytest.param(
            Nameless, {}, "Nameless: a plugin needs a non-empty string name", id="no name"
        ),
        pytest.param(Nothing, {}, "plugin 'Nothing' implements no extension point", id="nothing"),
        pytest.param(
            Explaining,
            {"points": ("filter", "score")},
            "plugin 'Explaining' declares score but does not implement it",
            id="declares more than it has",
        ),
        pytest.param(
            Explaining,
            {"api_version": "1"},
            "plugin 'Explaining': api_version must be 'MAJOR.MINOR' (e.g. '1.5'), got '1'",
            id="version format",
        ),
        pytest.param(
            Explaining,
            {"api_version": "1.6"},
            "plugin 'Explaining' was built for asched plugin API 1.6, but this asched provides "
            "API 1.5",
            id="a newer minor",
        ),
        pytest.param(
            Explaining,
            {"reads_annotations": "yes"},
            "plugin 'Explaining': reads_annotations must be True or False, got 'yes'",
            id="reads_annotations not a boolean",
        ),
        pytest.param(
            Explaining,
            {"api_version": "0.9"},
            "plugin 'Explaining' was built for asched plugin API 0.9",
            id="an older major",
        ),
    ],
)
def test_bad_declarations(plugin_type, kwargs, message) -> None:
    with pytest.raises(PluginLoadError) as caught:
        declare(plugin_type, **{"api_version": "1.0", **kwargs})
    assert str(caught.value).startswith(message)


def test_points_are_read_from_the_class() -> None:
    spec = declare(Explaining, api_version="1.0")
    assert spec.points == frozenset({"filter"})
    assert not spec.per_node
    assert spec(None, None).name == "Explaining"
