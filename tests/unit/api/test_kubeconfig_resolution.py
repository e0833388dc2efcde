"""Which kubeconfig ``asched run`` picks: kubectl's and kube-scheduler's order, no network.

Order: --kubeconfig, clientConnection.kubeconfig, in-cluster (KUBERNETES_SERVICE_HOST),
the first existing file of $KUBECONFIG, ~/.kube/config; nothing -> one error listing all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from asched.api.kubeconfig import resolve_kubeconfig
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


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("apiVersion: v1\nkind: Config\n")
    return path


# What exists: f = --kubeconfig, c = clientConnection.kubeconfig, i = in-cluster env,
# k = $KUBECONFIG (second entry of "missing:k"), h = ~/.kube/config. Expected: the winner.
@pytest.mark.parametrize(
    ("present", "winner"),
    [
        pytest.param("fcikh", "--kubeconfig", id="flag beats everything"),
        pytest.param("cikh", "clientConnection.kubeconfig", id="config beats in-cluster"),
        pytest.param("ikh", "in-cluster", id="in-cluster beats KUBECONFIG"),
        pytest.param("kh", "$KUBECONFIG", id="KUBECONFIG beats home"),
        pytest.param("h", "~/.kube/config", id="home last"),
    ],
)
def test_resolution_order(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, present: str, winner: str
) -> None:
    flag = touch(tmp_path / "flag.kubeconfig") if "f" in present else None
    configured = touch(tmp_path / "configured.kubeconfig") if "c" in present else None
    if "i" in present:
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    listed = touch(tmp_path / "listed.kubeconfig")
    if "k" in present:
        monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{listed}")
    if "h" in present:
        touch(home / ".kube" / "config")
    expected_path = {
        "--kubeconfig": flag,
        "clientConnection.kubeconfig": configured,
        "in-cluster": None,
        "$KUBECONFIG": listed,
        "~/.kube/config": home / ".kube" / "config",
    }[winner]

    source = resolve_kubeconfig(
        None if flag is None else str(flag), None if configured is None else str(configured)
    )

    assert source.origin == winner
    assert source.path == expected_path


def test_first_existing_kubeconfig_entry_wins(home: Path, tmp_path: Path, monkeypatch) -> None:
    first, second = touch(tmp_path / "a"), touch(tmp_path / "b")
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'gone'}::{first}:{second}")
    assert resolve_kubeconfig(None, None).path == first


def test_named_file_never_falls_through(home: Path, tmp_path: Path) -> None:
    # a typo in --kubeconfig must not silently talk to the ~/.kube/config cluster
    touch(home / ".kube" / "config")
    source = resolve_kubeconfig(str(tmp_path / "typo"), None)
    assert source.path == tmp_path / "typo"
    assert source.origin == "--kubeconfig"


def test_nothing_found_lists_what_was_tried(home: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'x'}:{tmp_path / 'y'}")
    with pytest.raises(InputError) as caught:
        resolve_kubeconfig(None, None)
    message = str(caught.value)
    assert message == (
        "no kubeconfig found; tried --kubeconfig (not given), "
        "clientConnection.kubeconfig (not set), in-cluster ($KUBERNETES_SERVICE_HOST not set), "
        f"$KUBECONFIG ({tmp_path / 'x'}:{tmp_path / 'y'}: no such file), "
        f"{home / '.kube' / 'config'} (no such file)"
    )
