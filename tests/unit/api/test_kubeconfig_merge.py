"""kubectl's kubeconfig rules for operator tools (``asched explain``, ``kubectl asched``).

Which files (:func:`resolve_kubectl`): --kubeconfig alone; else every existing file of
$KUBECONFIG; else ~/.kube/config; else in-cluster. How they merge
(:func:`check_kubeconfig` over an ``os.pathsep`` list): the first file to define a name
wins, the first to set current-context wins, and ``context`` picks any merged context.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from asched.api.kubeconfig import ContextChoice, check_kubeconfig, resolve_kubectl
from asched.errors import InputError


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME and an environment without in-cluster or KUBECONFIG settings."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    return home


def kubeconfig(
    path: Path,
    contexts: dict[str, str],
    *,
    current: str | None = None,
    namespace: str | None = None,
) -> Path:
    """A kubeconfig whose contexts name clusters (context -> cluster name); each cluster's
    server is ``http://<cluster>`` and each context's user is ``u``."""
    context_body: dict[str, Any] = {"user": "u"}
    if namespace:
        context_body["namespace"] = namespace
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": cluster, "cluster": {"server": f"http://{path.name}-{cluster}"}}
            for cluster in sorted(set(contexts.values()))
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [
            {"name": name, "context": {**context_body, "cluster": cluster}}
            for name, cluster in contexts.items()
        ],
    }
    if current is not None:
        document["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document))
    return path


# f = --kubeconfig, k = $KUBECONFIG ("missing:k1:k2"), h = ~/.kube/config, i = in-cluster
@pytest.mark.parametrize(
    ("present", "origin", "files"),
    [
        pytest.param("fkhi", "--kubeconfig", ["flag"], id="flag alone, nothing merged"),
        pytest.param("khi", "$KUBECONFIG", ["k1", "k2"], id="every existing KUBECONFIG file"),
        pytest.param("hi", "~/.kube/config", ["config"], id="home when KUBECONFIG is unset"),
        pytest.param("i", "in-cluster", [], id="in-cluster last, unlike asched run"),
    ],
)
def test_which_files(
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    present: str,
    origin: str,
    files: list[str],
) -> None:
    flag = kubeconfig(tmp_path / "flag", {"x": "c"}, current="x")
    if "k" in present:
        k1 = kubeconfig(tmp_path / "k1", {"x": "c"})
        k2 = kubeconfig(tmp_path / "k2", {"x": "c"})
        monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, [tmp_path / "gone", k1, k2])))
    if "h" in present:
        kubeconfig(home / ".kube" / "config", {"x": "c"})
    if "i" in present:
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")

    source = resolve_kubectl(str(flag) if "f" in present else None)

    assert source.origin == origin
    assert [path.name for path in source.paths] == files


def test_a_kubeconfig_list_of_missing_files_does_not_fall_back_to_home(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # kubectl: once $KUBECONFIG is set, ~/.kube/config is not consulted
    kubeconfig(home / ".kube" / "config", {"x": "c"}, current="x")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "gone"))
    with pytest.raises(InputError) as caught:
        resolve_kubectl(None)
    assert str(caught.value) == (
        f"no kubeconfig found; tried --kubeconfig (not given), "
        f"$KUBECONFIG ({tmp_path / 'gone'}: no such file), "
        "in-cluster ($KUBERNETES_SERVICE_HOST not set)"
    )


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        # a sets no current-context; b sets "shared" first; c's "other" comes too late
        pytest.param(None, ContextChoice("shared", None), id="first current-context set wins"),
        pytest.param("only-c", ContextChoice("only-c", "team"), id="context from a later file"),
    ],
)
def test_merged_files(tmp_path: Path, context: str | None, expected: ContextChoice) -> None:
    a = kubeconfig(tmp_path / "a", {"a-ctx": "one"})
    b = kubeconfig(tmp_path / "b", {"shared": "one"}, current="shared")
    c = kubeconfig(
        tmp_path / "c",
        {"shared": "two", "only-c": "two", "other": "two"},
        current="other",
        namespace="team",
    )
    assert check_kubeconfig(os.pathsep.join(map(str, [a, b, c])), context=context) == expected


def test_an_undefined_context_lists_the_merged_ones(tmp_path: Path) -> None:
    a = kubeconfig(tmp_path / "a", {"x": "c"}, current="x")
    b = kubeconfig(tmp_path / "b", {"y": "c"})
    listed = os.pathsep.join(map(str, [a, b]))
    with pytest.raises(InputError) as caught:
        check_kubeconfig(listed, context="prod")
    assert str(caught.value) == f"{listed}: context 'prod' is not defined (contexts: x, y)"


def test_a_context_namespace_is_returned(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "a", {"x": "c"}, current="x", namespace="shop")
    assert check_kubeconfig(path) == ContextChoice("x", "shop")
