"""Hollow nodes, node templates and snapshot files."""

from __future__ import annotations

from pathlib import Path

import pytest

from asched.errors import InputError
from asched.tools.sim.apiserver import nodes
from asched.tools.sim.server import SimConfig, SimServer


def test_hollow_nodes_spread_over_zones_round_robin():
    made = list(nodes.hollow_nodes(5, None, 3, "2024-01-02T03:04:05Z"))
    assert [n["metadata"]["name"] for n in made] == [f"node-{i}" for i in range(5)]
    # zone = index mod 3: 0,1,2,0,1
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in made] == [
        "zone-0",
        "zone-1",
        "zone-2",
        "zone-0",
        "zone-1",
    ]
    assert (
        made[0]["status"]["allocatable"]
        == made[0]["status"]["capacity"]
        == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    )
    assert made[0]["status"]["conditions"][0]["type"] == "Ready"


def test_zero_zones_means_no_zone_label():
    (node,) = nodes.hollow_nodes(1, None, 0, "now")
    assert "topology.kubernetes.io/zone" not in node["metadata"]["labels"]


def test_template_file(tmp_path: Path):
    path = tmp_path / "node.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  generateName: big-\n  labels: {size: big}\n"
        "status:\n  capacity: {cpu: '64', memory: 256Gi, pods: '250', nvidia.com/gpu: '8'}\n"
    )
    template = nodes.load_template(path)
    (node,) = nodes.hollow_nodes(1, template, 1, "now")
    assert node["metadata"]["labels"]["size"] == "big"
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("kind: Pod\n", "expected exactly one document of kind Node", id="wrong kind"),
        pytest.param("a: [\n", r"node.yaml:2:1: malformed YAML", id="bad YAML"),
    ],
)
def test_bad_template_files(tmp_path: Path, content, message):
    path = tmp_path / "node.yaml"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        nodes.load_template(path)


def test_missing_file_names_the_file(tmp_path: Path):
    with pytest.raises(InputError, match=r"nope\.yaml"):
        nodes.load_snapshot(tmp_path / "nope.yaml")


SNAPSHOT = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: real-1, resourceVersion: "999", uid: abc}
  status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: web, namespace: shop, resourceVersion: "1000"}
  spec:
    nodeName: real-1
    containers: [{name: c, image: nginx, resources: {requests: {cpu: 250m}}}]
  status: {phase: Running}
- apiVersion: example.com/v1
  kind: Widget
  metadata: {name: skipped}
---
apiVersion: v1
kind: Pod
metadata: {name: invalid, namespace: shop}
spec: {containers: []}
---
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: Not A Namespace}
spec: {containers: [{name: c, image: nginx}]}
"""


async def test_snapshot_is_replayed(tmp_path: Path):
    path = tmp_path / "snapshot.yaml"
    path.write_text(SNAPSHOT)
    objects = nodes.load_snapshot(path)
    assert len(objects) == 5  # the List is flattened
    async with SimServer(SimConfig(snapshot=tuple(objects))) as server:
        node = server.registry.find("nodes", "real-1")
        web = server.registry.find("pods", "shop/web")
        assert node is not None
        assert web is not None
        assert node.obj["metadata"]["uid"] == "abc"  # kept
        assert web.obj["status"]["phase"] == "Running"  # status kept, not reset
        assert web.obj["spec"]["nodeName"] == "real-1"
        assert server.registry.find("namespaces", "shop") is not None  # created for it
        assert server.registry.find("pods", "shop/invalid") is None  # skipped, logged
        # A namespace that cannot exist: its objects are skipped, the server still starts.
        assert server.registry.find("namespaces", "Not A Namespace") is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # kubectl get -o json: one List, read by the JSON parser, flattened
        pytest.param(
            '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1"}}]}',
            ["n1"],
            id="json-list",
        ),
        # YAML flow style also starts with "{" but is not JSON: read as YAML
        pytest.param("{kind: Node, metadata: {name: n2}}", ["n2"], id="yaml-flow"),
        # JSON is YAML: the same answer either way
        pytest.param(
            '\n  {"kind": "Node", "metadata": {"name": "n3"}}\n', ["n3"], id="json-indented"
        ),
    ],
)
def test_json_snapshot(tmp_path: Path, content: str, expected: list[str]):
    path = tmp_path / "snapshot.json"
    path.write_text(content)
    assert [obj["metadata"]["name"] for obj in nodes.load_snapshot(path)] == expected


def test_malformed_json_snapshot_names_the_file(tmp_path: Path):
    path = tmp_path / "broken.json"
    path.write_text('{"kind": "List", "items": [')
    with pytest.raises(InputError, match=r"broken\.json"):
        nodes.load_snapshot(path)
