"""The rules of ``asched explain``'s live form that need no cluster: which form the
flags make (and the usage errors), POD and -n, --config-map, the one-line failures, the
configuration line, and ``-o wide``."""

from __future__ import annotations

import argparse

import pytest
from rich.console import Console

from asched.errors import ApiError, ApiUnavailable, InputError
from asched.explain import command
from asched.explain.config_source import ConfigChoice, from_file, parse_config_map
from asched.explain.engine import evaluate
from asched.explain.live import describe_failure
from asched.explain.render import render
from tests.builders import make_node, make_pod, pod_info, profile_with, snapshot_of


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.configure(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        pytest.param(("web",), None, id="live: POD"),
        pytest.param(
            ("web", "--kubeconfig", "k", "--context", "c"), None, id="live: kubectl flags"
        ),
        pytest.param(("--snapshot", "s", "--pod", "p"), None, id="snapshot: --pod FILE"),
        pytest.param(("--snapshot", "s", "shop/web"), None, id="snapshot: POD of the snapshot"),
        pytest.param(
            (),
            "give POD (a pod of the live cluster) or --pod FILE (a pod to place in it),"
            " or --snapshot FILE with either",
            id="nothing",
        ),
        # where would this pod go if it were created now, in the live cluster
        pytest.param(("--pod", "p"), None, id="live: --pod FILE"),
        pytest.param(
            ("--pod", "p", "web"),
            "give POD (a pod of the live cluster) or --pod FILE (a pod to place in it),"
            " or --snapshot FILE with either",
            id="live: both --pod and POD",
        ),
        pytest.param(
            ("--pod", "p", "-n", "shop"),
            "-n names the namespace of POD; --pod FILE holds its own",
            id="live: -n with --pod",
        ),
        pytest.param(
            ("--snapshot", "s", "--pod", "p", "web"),
            "with --snapshot, give the pod either as --pod FILE or as POD",
            id="both --pod and POD",
        ),
        pytest.param(
            ("--snapshot", "s"),
            "with --snapshot, give the pod either as --pod FILE or as POD",
            id="--snapshot without a pod",
        ),
        pytest.param(
            ("--snapshot", "s", "web", "--kubeconfig", "k"),
            "--kubeconfig reads a live cluster; --snapshot reads a file: give one",
            id="--kubeconfig with --snapshot",
        ),
        pytest.param(
            ("--snapshot", "s", "web", "--context", "c"),
            "--context reads a live cluster; --snapshot reads a file: give one",
            id="--context with --snapshot",
        ),
        pytest.param(
            ("--snapshot", "s", "web", "--snapshot-out", "o"),
            "--snapshot-out reads a live cluster; --snapshot reads a file: give one",
            id="--snapshot-out with --snapshot",
        ),
        pytest.param(
            ("--snapshot", "s", "--pod", "p", "-n", "shop"),
            "-n names the namespace of POD; --pod FILE holds its own",
            id="-n with --pod",
        ),
    ],
)
def test_forms(argv: tuple[str, ...], error: str | None) -> None:
    args = parse(*argv)
    if error is None:
        command.check_form(args)
    else:
        with pytest.raises(InputError) as caught:
            command.check_form(args)
        assert str(caught.value) == error


@pytest.mark.parametrize(
    ("pod", "namespace", "expected"),
    [
        pytest.param("web", None, ("ctx-ns", "web"), id="NAME: the context's namespace"),
        pytest.param("web", "shop", ("shop", "web"), id="NAME with -n"),
        pytest.param("shop/web", None, ("shop", "web"), id="NAMESPACE/NAME"),
        pytest.param("shop/web", "shop", ("shop", "web"), id="NAMESPACE/NAME agreeing with -n"),
    ],
)
def test_pod_target(pod: str, namespace: str | None, expected: tuple[str, str]) -> None:
    assert command.pod_target(pod, namespace, "ctx-ns") == expected


@pytest.mark.parametrize(
    ("pod", "namespace", "error"),
    [
        pytest.param(
            "shop/web",
            "prod",
            "POD 'shop/web' is in namespace 'shop', but -n says 'prod'",
            id="-n disagrees",
        ),
        pytest.param("a/b/c", None, "POD: expected NAME or NAMESPACE/NAME, got 'a/b/c'", id="2 /"),
        pytest.param(
            "shop/", None, "POD: expected NAME or NAMESPACE/NAME, got 'shop/'", id="no name"
        ),
        pytest.param("/web", None, "POD: expected NAME or NAMESPACE/NAME, got '/web'", id="no ns"),
    ],
)
def test_bad_pod_target(pod: str, namespace: str | None, error: str) -> None:
    with pytest.raises(InputError) as caught:
        command.pod_target(pod, namespace, "default")
    assert str(caught.value) == error


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("kube-system/asched-config", ("kube-system", "asched-config"), id="ok"),
        pytest.param("asched-config", None, id="no namespace"),
        pytest.param("a/b/c", None, id="two slashes"),
        pytest.param("/b", None, id="empty namespace"),
    ],
)
def test_config_map_flag(text: str, expected: tuple[str, str] | None) -> None:
    if expected is not None:
        assert parse_config_map(text) == expected
        return
    with pytest.raises(InputError) as caught:
        parse_config_map(text)
    assert str(caught.value) == f"--config-map: expected NAMESPACE/NAME, got {text!r}"


FORBIDDEN = ApiError(
    403,
    "Forbidden",
    "GET /apis/policy/v1/poddisruptionbudgets: poddisruptionbudgets.policy is forbidden: "
    'User "bob" cannot list resource "poddisruptionbudgets"',
)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        pytest.param(
            FORBIDDEN,
            "forbidden: cannot list poddisruptionbudgets (needed for budgets): "
            'poddisruptionbudgets.policy is forbidden: User "bob" cannot list resource '
            '"poddisruptionbudgets"',
            id="403: the server's message, without the request",
        ),
        pytest.param(
            ApiError(401, "Unauthorized", "GET /api/v1/nodes: Unauthorized"),
            "unauthorized: cannot list poddisruptionbudgets (needed for budgets): Unauthorized "
            "(check the kubeconfig's credentials)",
            id="401",
        ),
        pytest.param(
            ApiUnavailable("GET", "/api/v1/nodes", "https://10.0.0.1:6443", "OSError: refused"),
            "cannot reach the API server https://10.0.0.1:6443: cannot list "
            "poddisruptionbudgets (needed for budgets): OSError: refused",
            id="unreachable",
        ),
        pytest.param(
            ApiError(500, "InternalError", "GET /api/v1/nodes: etcd is down"),
            "cannot list poddisruptionbudgets (needed for budgets): "
            "500 InternalError: GET /api/v1/nodes: etcd is down",
            id="any other status: all of it",
        ),
    ],
)
def test_failure_lines(exc: ApiError, expected: str) -> None:
    assert describe_failure(exc, "list poddisruptionbudgets", "budgets") == expected


@pytest.mark.parametrize(
    ("choice", "line", "document"),
    [
        pytest.param(
            ConfigChoice(from_file(None).config, "file", "/etc/asched/config.yaml"),
            "--config /etc/asched/config.yaml",
            {"source": "file", "name": "/etc/asched/config.yaml"},
            id="file",
        ),
        pytest.param(
            ConfigChoice(from_file(None).config, "ConfigMap", "kube-system/asched-config"),
            "ConfigMap kube-system/asched-config (key config.yaml)",
            {"source": "ConfigMap", "name": "kube-system/asched-config", "key": "config.yaml"},
            id="ConfigMap",
        ),
        pytest.param(
            ConfigChoice(from_file(None).config, "default", note="no ConfigMap x/y"),
            "the default profile (no ConfigMap x/y)",
            {"source": "default", "name": None, "note": "no ConfigMap x/y"},
            id="default, after looking for a ConfigMap",
        ),
        pytest.param(
            from_file(None),
            "the default profile",
            {"source": "default", "name": None},
            id="default",
        ),
    ],
)
def test_configuration_is_named(choice: ConfigChoice, line: str, document: dict[str, str]) -> None:
    assert choice.describe() == line
    assert choice.to_json() == document


def rendered(*, wide: bool) -> list[str]:
    # big and small fit; tiny-1 and tiny-2 lack cpu; tainted is NoSchedule-tainted
    nodes = [
        make_node("big", cpu="8"),
        make_node("small", cpu="2"),
        make_node("tiny-1", cpu="100m"),
        make_node("tiny-2", cpu="100m"),
        make_node("tainted", cpu="8", taints=[("k", "v", "NoSchedule")]),
    ]
    profile = profile_with(
        filter=("NodeResourcesFit", "TaintToleration"),
        score=(("NodeResourcesFit", 1), ("TaintToleration", 3)),
    )
    evaluation = evaluate(snapshot_of(nodes), pod_info(make_pod(cpu="1")), profile)
    console = Console(record=True, width=250)
    render(evaluation, console, limit=1, wide=wide, configuration="the default profile")
    return console.export_text().splitlines()


def rows_of(lines: list[str], *nodes: str) -> list[str]:
    """The table rows of ``nodes``: their first cells."""
    return [line.strip().split("  ")[0] for line in lines if line.strip().split(" ")[0] in nodes]


def test_table_groups_and_limits() -> None:
    lines = rendered(wide=False)
    assert lines[0] == "configuration: the default profile"
    assert rows_of(lines, "big", "small") == ["big <- selected"]  # --limit 1
    assert any("tiny-1, tiny-2" in line for line in lines)  # grouped
    assert not any("tainted" in line for line in lines)  # second group: over the limit


def test_wide_shows_every_node_on_its_own_row() -> None:
    lines = rendered(wide=True)
    assert lines[0] == "configuration: the default profile"
    assert rows_of(lines, "big", "small") == ["big <- selected", "small"]  # no limit
    for node in ("tiny-1", "tiny-2", "tainted"):
        (row,) = [line for line in lines if line.strip().startswith(node)]
        assert ("Insufficient cpu" if node.startswith("tiny") else "untolerated taint") in row
