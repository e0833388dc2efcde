"""The objects of a workload's gangs: the PodGroup CRD, one PodGroup per gang, its members.

A gang is scheduler-plugins' PodGroup (``scheduling.x-k8s.io/v1alpha1``): ``spec.minMember``,
and when the workload gives them ``spec.minResources`` and ``spec.scheduleTimeoutSeconds``.
Its member pods carry the label ``scheduling.x-k8s.io/pod-group: <name>`` and live in the
PodGroup's namespace. Names: gang ``i`` of a group is ``<namePrefix>-<i>``; its member
``m`` (0 to size - 1, in the order of the group's ``members`` entries) is the pod
``<namePrefix>-<i>-<m>``.

The CRD the harness installs when the server has none (:func:`ensure_crd`) is a copy of
``deploy/crds/scheduling.x-k8s.io_podgroups.yaml`` shipped as package data (a test keeps
the two identical), so an installed asched can run gang workloads outside a checkout.

The same gangs in kube-scheduler v1.37's own form (:data:`NATIVE`): a
``scheduling.k8s.io/v1beta1`` PodGroup with ``spec.schedulingPolicy.gang.minCount``, and
members that name it in ``spec.schedulingGroup.podGroupName`` (the GangScheduling plugin,
on with the ``GenericWorkload`` gate). Members keep the label either way: the harness's
observer reads gang membership from it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final, Literal

import yaml

from asched.cluster.gangs import POD_GROUP_LABEL
from asched.errors import AschedError
from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import RestClient
from asched.tools.bench import objects
from asched.tools.bench.loadgen import PODGROUPS_PATH
from asched.tools.bench.observe import PHASE_LABEL
from asched.tools.bench.workload import GangGroup, PodGroup

Raw = dict[str, Any]

GROUP: Final = "scheduling.x-k8s.io"
VERSION: Final = "v1alpha1"
CRD_NAME: Final = f"podgroups.{GROUP}"
CRD_FILE: Final = Path(__file__).resolve().parent / "crds" / f"{GROUP}_podgroups.yaml"
CRD_PATH: Final = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}"
#: which gang API a run's objects use: scheduler-plugins' CRD, or v1.37's own v1beta1
GangApi = Literal["crd", "native"]
CRD: Final = "crd"
NATIVE: Final = "native"
NATIVE_API_VERSION: Final = "scheduling.k8s.io/v1beta1"


class CrdError(AschedError):
    """The PodGroup CRD could not be installed or did not become Established in time."""


def podgroups_path(namespace: str | None = None, api: GangApi = CRD) -> str:
    """The PodGroup collection (all namespaces when ``namespace`` is None)."""
    if api == NATIVE:
        where = "" if namespace is None else f"/namespaces/{namespace}"
        return f"/apis/{NATIVE_API_VERSION}{where}/podgroups"
    if namespace is None:
        return f"/apis/{GROUP}/{VERSION}/podgroups"
    return PODGROUPS_PATH.format(namespace=namespace)


def crd() -> Raw:
    """The PodGroup CustomResourceDefinition (the shipped copy of ``deploy/crds``)."""
    documents = [doc for doc in yaml.safe_load_all(CRD_FILE.read_text()) if doc]
    return dict(documents[0])


def pod_group(group: GangGroup, index: int, phase: str = "measured", api: GangApi = CRD) -> Raw:
    """The PodGroup of gang ``index`` of ``group``, in ``api``'s form.

    The native form has no ``minResources`` or timeout: kube-scheduler's GangScheduling
    waits at Permit for five minutes, its fixed timeout.
    """
    if api == NATIVE:
        return {
            "apiVersion": NATIVE_API_VERSION,
            "kind": "PodGroup",
            "metadata": {
                "name": group.gang_name(index),
                "namespace": group.namespace,
                "labels": {PHASE_LABEL: phase},
            },
            "spec": {"schedulingPolicy": {"gang": {"minCount": group.min_member}}},
        }
    spec: Raw = {"minMember": group.min_member}
    if group.min_resources:
        spec["minResources"] = dict(group.min_resources)
    if group.schedule_timeout_seconds is not None:
        spec["scheduleTimeoutSeconds"] = group.schedule_timeout_seconds
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PodGroup",
        "metadata": {
            "name": group.gang_name(index),
            "namespace": group.namespace,
            "labels": {PHASE_LABEL: phase},
        },
        "spec": spec,
    }


def pod_groups(
    groups: Iterable[GangGroup], phase: str = "measured", api: GangApi = CRD
) -> Iterator[Raw]:
    """Every PodGroup of ``groups``, gang after gang."""
    for group in groups:
        for index in range(group.count):
            yield pod_group(group, index, phase, api)


def member_shapes(group: GangGroup) -> list[PodGroup]:
    """Member ``m``'s shape, for m in 0 .. size - 1 (the ``members`` entries expanded)."""
    return [member for member in group.members for _ in range(member.count)]


def member_order(group: GangGroup) -> Iterator[tuple[int, int]]:
    """(gang, member) in creation order: gang after gang, or round-robin (``interleave``).

    >>> from asched.tools.bench.workload import GangGroup, PodGroup
    >>> g = GangGroup(count=2, name_prefix="g", min_member=2, members=(PodGroup(count=2),))
    >>> list(member_order(g))
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    >>> from dataclasses import replace
    >>> list(member_order(replace(g, interleave=True)))
    [(0, 0), (1, 0), (0, 1), (1, 1)]
    """
    if group.interleave:
        for member in range(group.size):
            for gang in range(group.count):
                yield gang, member
    else:
        for gang in range(group.count):
            for member in range(group.size):
                yield gang, member


def member_pods(
    groups: Iterable[GangGroup],
    phase: str = "measured",
    *,
    scheduler_name: str,
    api: GangApi = CRD,
) -> Iterator[Raw]:
    """Every member pod of ``groups`` (group after group, each in :func:`member_order`);
    in the native form each names its PodGroup in ``spec.schedulingGroup``."""
    for group in groups:
        shapes = member_shapes(group)
        for gang, member in member_order(group):
            name = group.gang_name(gang)
            shape = shapes[member]
            raw = objects.pod(shape, f"{name}-{member}", scheduler_name=scheduler_name)
            labels = raw.setdefault("metadata", {}).setdefault("labels", {})
            labels[POD_GROUP_LABEL] = name
            labels[PHASE_LABEL] = phase
            if api == NATIVE:
                raw.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": name}
            yield raw


def _established(obj: Raw) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


async def ensure_crd(rest: RestClient, *, within: float = 60.0, poll: float = 0.1) -> bool:
    """Install the PodGroup CRD if the server has none; wait until PodGroups are served.

    Returns True when this call created it. Waits for the CRD's ``Established``
    condition and then for a LIST of PodGroups to answer (a genuine API server may serve
    the resource a moment after Established).

    Raises
    ------
    CrdError
        Not Established or not served within ``within`` seconds.
    """
    created = False
    try:
        current = await rest.get(CRD_PATH)
    except StatusError as exc:
        if exc.status != 404:
            raise
        current = await rest.create(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd()
        )
        created = True
    deadline = time.monotonic() + within
    while not _established(current):
        if time.monotonic() > deadline:
            raise CrdError(f"the CRD {CRD_NAME} was not Established within {within:g} s")
        await asyncio.sleep(poll)
        current = await rest.get(CRD_PATH)
    while True:
        try:
            await rest.list(podgroups_path(), limit=1)
            return created
        except StatusError as exc:
            if exc.status != 404 or time.monotonic() > deadline:
                raise CrdError(f"PodGroups are not served ({exc}) within {within:g} s") from exc
        await asyncio.sleep(poll)
