"""Gang tests' helpers: the PodGroup CRD, PodGroups and members, the Coscheduling profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from scheduler_harness import until

from asched.cluster.gangs import POD_GROUP_LABEL
from asched.tools.backends.rest import StatusError

CRD = Path(__file__).resolve().parents[2] / "deploy" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP_VERSION = "/apis/scheduling.x-k8s.io/v1alpha1"


def coscheduling(
    wait_seconds: int = 30, backoff_seconds: int = 0, reject_percentage: int = 10
) -> dict[str, Any]:
    """The profile scheduler-plugins documents: Coscheduling everywhere it plugs in, and as
    the only QueueSort."""
    return {
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        },
        "pluginConfig": [
            {
                "name": "Coscheduling",
                "args": {
                    "permitWaitingTimeSeconds": wait_seconds,
                    "podGroupBackoffSeconds": backoff_seconds,
                    "podGroupRejectPercentage": reject_percentage,
                },
            }
        ],
    }


async def install_crd(cluster: Any) -> None:
    """Create the PodGroup CRD (once per server) and wait until it is served."""
    crd = next(d for d in yaml.safe_load_all(CRD.read_text()) if d)
    try:
        await cluster.rest.create(CRDS, crd)
    except StatusError as exc:
        if exc.status != 409:
            raise

    async def served() -> bool:
        try:
            await cluster.rest.list(f"{GROUP_VERSION}/podgroups")
        except StatusError:
            return False
        return True

    await until(served, within=30)


async def create_group(cluster: Any, name: str, min_member: int, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": cluster.namespace},
        "spec": {"minMember": min_member, **spec},
    }
    created: dict[str, Any] = await cluster.rest.create(
        f"{GROUP_VERSION}/namespaces/{cluster.namespace}/podgroups", body
    )
    return created


async def create_members(
    cluster: Any,
    group: str,
    scheduler: str,
    count: int,
    *,
    cpu: str = "1",
    prefix: str = "",
    spec: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
) -> list[str]:
    names = []
    for index in range(count):
        name = f"{prefix or group}-{index}-{cluster.unique_name('m')[-4:]}"
        await cluster.create_pod(
            name,
            scheduler_name=scheduler,
            cpu=cpu,
            memory="10Mi",
            labels={POD_GROUP_LABEL: group, **(labels or {})},
            spec=spec,
        )
        names.append(name)
    return names


def one_per_node(label: str) -> dict[str, Any]:
    """A spec making members repel each other (required anti-affinity per hostname): the
    whole-gang check does not see constraints between members, so on 3 nodes a gang of 4
    such members is admitted, 3 are assumed and wait at Permit, and the 4th fits nowhere."""
    return {
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"repel": label}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
    }


async def bound_nodes(cluster: Any, names: list[str]) -> dict[str, str]:
    """Pod name -> node, for the given pods that are bound."""
    listed = await cluster.rest.list(f"/api/v1/namespaces/{cluster.namespace}/pods")
    wanted = set(names)
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in listed.get("items", [])
        if p["metadata"]["name"] in wanted and p.get("spec", {}).get("nodeName")
    }


async def condition_message(cluster: Any, name: str) -> str:
    """The message of the pod's PodScheduled condition ("" when it has none)."""
    pod = await cluster.rest.get(f"/api/v1/namespaces/{cluster.namespace}/pods/{name}")
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled":
            return str(condition.get("message") or "")
    return ""
