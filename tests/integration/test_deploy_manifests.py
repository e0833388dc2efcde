"""deploy/: the manifests agree with the code, grant least privilege, and a real server accepts them.

Offline checks read the YAML files (and ``kubectl kustomize``'s rendering); the last test
sends the whole kustomization to kube-apiserver v1.37.2 as a server-side dry run, which
runs schema validation and admission (RBAC escalation checks included) without persisting.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from asched import cli
from asched.serving import ALWAYS_ALLOW
from asched.serving.health import DEFAULT_PORT
from tests.configs import load_config
from tests.kubectl import kubectl_path

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
EXAMPLES = DEPLOY / "examples"


READ = ("get", "list", "watch")
#: (apiGroup, resources, verbs): every call asched makes outside the leader-election Lease.
NEEDED = [
    ("", ("nodes", "pods", "namespaces", "services", "replicationcontrollers"), READ),
    ("apps", ("replicasets", "statefulsets"), READ),
    ("policy", ("poddisruptionbudgets",), READ),
    # the storage informers; VolumeBinding's PreBind PUTs a PV's claimRef and a claim's
    # selected-node annotation
    ("", ("persistentvolumeclaims", "persistentvolumes"), (*READ, "update")),
    (
        "storage.k8s.io",
        ("storageclasses", "csinodes", "csidrivers", "csistoragecapacities"),
        ("list", "watch"),
    ),
    ("scheduling.x-k8s.io", ("podgroups",), READ),
    ("scheduling.x-k8s.io", ("podgroups/status",), ("patch",)),
    ("scheduling.k8s.io", ("workloads",), READ),
    ("", ("pods/binding", "bindings"), ("create",)),
    ("", ("pods",), ("delete",)),
    ("", ("pods/status",), ("patch", "update")),
    ("", ("events",), ("create", "patch", "update")),
    ("events.k8s.io", ("events",), ("create", "patch", "update")),
]
#: What the built-in ClusterRole system:auth-delegator grants (checked on the real server
#: below): the reviews of the delegated authn/authz of /metrics.
AUTH_DELEGATOR = {
    ("authentication.k8s.io", "tokenreviews", "create", ""),
    ("authorization.k8s.io", "subjectaccessreviews", "create", ""),
}


def documents(name: str, folder: Path = DEPLOY) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((folder / name).read_text()) if doc]


def one(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [
        doc
        for path in sorted(DEPLOY.glob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in documents(path.name)
        if doc["kind"] == kind and (name is None or doc["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def container() -> dict[str, Any]:
    deployment = one("Deployment")
    (main,) = deployment["spec"]["template"]["spec"]["containers"]
    return main


def test_configmap_holds_a_config_that_loads() -> None:
    configmap = one("ConfigMap", "asched-config")
    config = load_config(yaml.safe_load(configmap["data"]["config.yaml"]), source="deploy")

    assert [profile.scheduler_name for profile in config.profiles] == ["asched"]
    election = config.leader_election
    assert election.leader_elect
    assert (election.resource_lock, election.resource_name) == ("leases", "asched")
    assert election.resource_namespace == "kube-system"


def test_cluster_role_has_no_wildcards_and_exactly_the_needed_rules() -> None:
    role = one("ClusterRole", "asched")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert not any("*" in part for triple in granted for part in triple)
    assert all(
        "resourceNames" not in rule and "nonResourceURLs" not in rule for rule in role["rules"]
    )

    expected = {
        (group, resource, verb)
        for group, resources, verbs in NEEDED
        for resource in resources
        for verb in verbs
    }
    assert granted == expected


def test_lease_permissions_are_namespaced_and_named_where_possible() -> None:
    role = one("Role", "asched-leader-election")
    assert role["metadata"]["namespace"] == "kube-system"
    rules = {tuple(rule["verbs"]): rule for rule in role["rules"]}
    assert set(rules) == {("create",), ("get", "update")}
    # create cannot carry resourceNames (the name is unknown when it is authorized).
    assert "resourceNames" not in rules[("create",)]
    assert rules[("get", "update")]["resourceNames"] == ["asched"]
    for rule in role["rules"]:
        assert (rule["apiGroups"], rule["resources"]) == (["coordination.k8s.io"], ["leases"])

    binding = one("RoleBinding", "asched-leader-election")
    assert binding["roleRef"]["name"] == "asched-leader-election"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "asched", "namespace": "kube-system"}
    ]
    cluster_binding = one("ClusterRoleBinding", "asched")
    assert cluster_binding["subjects"] == binding["subjects"]


def test_deployment_runs_asched_hardened_with_probes_on_the_health_port() -> None:
    deployment = one("Deployment", "asched")
    pod = deployment["spec"]["template"]["spec"]
    main = container()

    assert deployment["spec"]["replicas"] == 2
    assert pod["serviceAccountName"] == one("ServiceAccount")["metadata"]["name"]
    assert pod["automountServiceAccountToken"] is True
    assert pod["schedulerName"] == "default-scheduler"

    # The command parses with asched's own CLI and uses the in-cluster config.
    argv = main["command"][1:] + main["args"]
    assert main["command"][0] == "asched"
    args = cli.build_parser().parse_args(argv)
    assert args.config == "/etc/asched/config.yaml"
    assert getattr(args, "kubeconfig", None) is None
    mount = {m["name"]: m for m in main["volumeMounts"]}["config"]
    volume = {v["name"]: v for v in pod["volumes"]}["config"]
    assert (mount["mountPath"], volume["configMap"]["name"]) == ("/etc/asched", "asched-config")

    security = main["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert {"requests", "limits"} <= set(main["resources"])
    for kind in ("requests", "limits"):
        assert set(main["resources"][kind]) == {"cpu", "memory"}

    (port,) = main["ports"]
    assert (port["name"], port["containerPort"]) == ("health", DEFAULT_PORT)
    # the port is TLS (self-signed: the kubelet does not verify probes' certificates), and
    # the health paths need no token
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = main[probe]["httpGet"]
        assert (get["path"], get["port"], get["scheme"]) == (path, "health", "HTTPS")
        assert path in ALWAYS_ALLOW

    spread = pod["topologySpreadConstraints"][0]
    assert spread["topologyKey"] == "kubernetes.io/hostname"
    assert spread["whenUnsatisfiable"] == "DoNotSchedule"
    assert spread["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]


def test_dockerfile_user_matches_the_pod_uid() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    uid = container()["securityContext"]["runAsUser"]
    assert re.search(r"^FROM python:3\.11-slim$", dockerfile, re.MULTILINE)
    assert f"--uid {uid}" in dockerfile
    assert re.search(rf"^USER {uid}(:\d+)?$", dockerfile, re.MULTILINE)
    assert 'ENTRYPOINT ["asched"]' in dockerfile


def test_dockerfile_installs_the_scheduler_without_extras() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    installs = [line for line in dockerfile.splitlines() if re.search(r"\bpip3? install\b", line)]
    assert len(installs) == 1, installs
    # `pip install .` alone: `.[bench]` or a named library would grow the image.
    assert re.search(r"\bpip3? install \.(\s|$)", installs[0]), installs[0]
    assert "[" not in installs[0]


def test_the_plugin_image_ends_as_the_pod_user_and_checks_its_plugins() -> None:
    dockerfile = (DEPLOY / "Dockerfile.plugins").read_text()
    uid = container()["securityContext"]["runAsUser"]
    users = re.findall(r"^USER (\S+)$", dockerfile, re.MULTILINE)
    assert users[-1].split(":")[0] == str(uid)  # root only while installing
    # the build fails when a plugin cannot be loaded (`asched plugins` exits 1)
    assert re.search(r"\basched plugins\s*$", dockerfile, re.MULTILINE)


@pytest.mark.kubectl
def test_kustomization_renders_every_manifest() -> None:
    rendered = subprocess.run(
        [kubectl_path(), "kustomize", str(DEPLOY)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    kinds = sorted(doc["kind"] for doc in yaml.safe_load_all(rendered) if doc)
    assert kinds == sorted(
        [
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "ConfigMap",
            "Deployment",
            "Service",
            "ClusterRole",
            "ClusterRoleBinding",
        ]
    )


def test_the_scheduler_may_create_the_reviews_of_delegated_auth() -> None:
    binding = one("ClusterRoleBinding", "asched:auth-delegator")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "system:auth-delegator",
    }
    assert binding["subjects"] == one("ClusterRoleBinding", "asched")["subjects"]


def test_the_metrics_reader_role_grants_get_on_metrics_only() -> None:
    role = one("ClusterRole", "asched-metrics-reader")
    assert role["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    (example,) = documents("prometheus-rbac.yaml", EXAMPLES)
    assert (example["kind"], example["roleRef"]["name"]) == (
        "ClusterRoleBinding",
        "asched-metrics-reader",
    )


def test_service_and_service_monitor_reach_the_metrics_port() -> None:
    service = one("Service", "asched")
    deployment = one("Deployment", "asched")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    (port,) = service["spec"]["ports"]
    (container_port,) = container()["ports"]
    assert (port["name"], port["port"], port["targetPort"]) == (
        "https-metrics",
        DEFAULT_PORT,
        container_port["name"],
    )

    (monitor,) = documents("servicemonitor.yaml", EXAMPLES)
    assert monitor["kind"] == "ServiceMonitor"
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["scheme"], endpoint["path"]) == (
        "https-metrics",
        "https",
        "/metrics",
    )
    assert endpoint["bearerTokenFile"].endswith("/serviceaccount/token")


@pytest.mark.kube_apiserver
def test_server_side_dry_run_is_accepted(kube_apiserver) -> None:
    result = subprocess.run(
        [
            kubectl_path(),
            "apply",
            "--dry-run=server",
            "-k",
            str(DEPLOY),
            "--kubeconfig",
            str(kube_apiserver.kubeconfig),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 10, result.stdout
    assert all(line.endswith("(server dry run)") for line in lines), result.stdout


@pytest.mark.kube_apiserver
def test_the_examples_and_auth_delegator_on_the_real_server(kube_apiserver) -> None:
    def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [kubectl_path(), *args, "--kubeconfig", str(kube_apiserver.kubeconfig)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    # the ServiceMonitor's CRD is absent here: only the binding example is sent
    result = kubectl("apply", "--dry-run=server", "-f", str(EXAMPLES / "prometheus-rbac.yaml"))
    assert result.returncode == 0, result.stderr
    # system:auth-delegator grants exactly the two reviews (what docs/deploy.md lists)
    result = kubectl("get", "clusterrole", "system:auth-delegator", "-o", "yaml")
    assert result.returncode == 0, result.stderr
    granted = {
        (group, resource, verb, "")
        for rule in yaml.safe_load(result.stdout)["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert granted == AUTH_DELEGATOR


def documented_permissions() -> set[tuple[str, str, str, str]]:
    """(apiGroup, resource, verb, resourceName or "") from docs/deploy.md's Permissions table.

    A row's group cell is ``core`` (the "" group) or a group, several comma-separated, with an
    optional ``(Role in ...)`` note; a resource may end with ``(`name` only)``.
    """
    text = (DEPLOY.parent / "docs" / "deploy.md").read_text()
    section = re.split(r"^## Permissions.*$", text, maxsplit=1, flags=re.MULTILINE)[1]
    section = section.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # no header
    documented: set[tuple[str, str, str, str]] = set()
    for row in rows:
        groups_cell, resources_cell, verbs_cell = (cell.strip() for cell in row.split("|")[1:4])
        groups = [g.strip() for g in re.sub(r"\(.*?\)", "", groups_cell).split(",")]
        names = re.findall(r"`([^`]+)` only", resources_cell)
        resources = [r.strip() for r in re.sub(r"\(.*?\)", "", resources_cell).split(",")]
        for group in groups:
            for resource in resources:
                for verb in (v.strip() for v in verbs_cell.split(",")):
                    for name in names or [""]:
                        documented.add(("" if group == "core" else group, resource, verb, name))
    return documented


def test_docs_list_exactly_the_granted_permissions() -> None:
    # every verb on every resource the ClusterRole and the Role grant (and the bound
    # system:auth-delegator), and nothing else
    one("ClusterRoleBinding", "asched:auth-delegator")
    granted = AUTH_DELEGATOR | {
        (group, resource, verb, name)
        for kind, role in (("ClusterRole", "asched"), ("Role", "asched-leader-election"))
        for rule in one(kind, role)["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
        for name in rule.get("resourceNames") or [""]
    }
    documented = documented_permissions()
    assert granted - documented == set(), "granted in deploy/rbac.yaml, missing in docs/deploy.md"
    assert documented - granted == set(), "in docs/deploy.md, not granted by deploy/rbac.yaml"
    assert ("", "pods", "delete", "") in documented
