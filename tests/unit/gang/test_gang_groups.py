"""PodGroup and Workload decoding (asched.cluster.gangs.py): one Gang record, errors that
name the object and the field."""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.gangs import (
    POD_GROUP_LABEL,
    WORKLOAD_TIMEOUT_SECONDS,
    decode_pod_group,
    decode_workload,
    gang_key_of,
)
from asched.errors import DecodeError


def pod_group(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "job-a",
            "namespace": "ml",
            "uid": "u1",
            "creationTimestamp": "2026-11-24T10:00:00Z",
        },
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("spec", "min_member", "resources", "timeout"),
    [
        pytest.param({"minMember": 4}, 4, {}, None, id="members only"),
        # 2 CPU = 2000 millicores; 8Gi = 8 * 2**30 = 8589934592 bytes; gpus are counts
        pytest.param(
            {"minMember": 8, "minResources": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": 8}},
            8,
            {"cpu": 2000, "memory": 8589934592, "nvidia.com/gpu": 8},
            None,
            id="min resources in canonical units",
        ),
        pytest.param({"minMember": 2, "scheduleTimeoutSeconds": 30}, 2, {}, 30.0, id="timeout"),
        # the CRD's default: minMember 1 when absent
        pytest.param({}, 1, {}, None, id="defaults"),
    ],
)
def test_pod_group(
    spec: dict[str, Any], min_member: int, resources: dict[str, int], timeout: float | None
) -> None:
    gang = decode_pod_group(pod_group(**spec))
    assert (gang.key, gang.source, gang.min_member) == ("ml/job-a", "PodGroup", min_member)
    assert dict(gang.min_resources) == resources
    assert gang.timeout_seconds == timeout
    assert gang.created == "2026-11-24T10:00:00Z"


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        pytest.param(
            {"minMember": 0},
            "PodGroup ml/job-a: spec.minMember: must be at least 1, got 0",
            id="minMember below 1",
        ),
        pytest.param(
            {"minMember": "4"},
            "PodGroup ml/job-a: spec.minMember: must be an integer, got '4'",
            id="minMember a string",
        ),
        pytest.param(
            {"minMember": 2, "minResources": {"cpu": "two"}},
            "PodGroup ml/job-a: spec.minResources.cpu: quantities must match",
            id="malformed quantity",
        ),
        pytest.param(
            {"minMember": 2, "minResources": {"memory": "-1Gi"}},
            "PodGroup ml/job-a: spec.minResources.memory: must not be negative",
            id="negative quantity",
        ),
        pytest.param(
            {"minMember": 2, "scheduleTimeoutSeconds": 0},
            "PodGroup ml/job-a: spec.scheduleTimeoutSeconds: must be at least 1, got 0",
            id="zero timeout",
        ),
    ],
)
def test_pod_group_errors_name_the_field(spec: dict[str, Any], error: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_pod_group(pod_group(**spec))
    assert str(caught.value).startswith(error)


def test_workload_gangs() -> None:
    workload = {
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {
            "podGroups": [
                {"name": "workers", "policy": {"gang": {"minCount": 8}}},
                {"name": "evaluator", "policy": {"basic": {}}},  # not a gang
            ]
        },
    }
    [gang] = decode_workload(workload)
    assert (gang.key, gang.name, gang.source) == ("ml/train/workers", "train/workers", "Workload")
    assert (gang.min_member, gang.timeout_seconds) == (8, WORKLOAD_TIMEOUT_SECONDS)


def test_workload_error_names_the_group() -> None:
    workload = {
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"podGroups": [{"name": "w", "policy": {"gang": {"minCount": 0}}}]},
    }
    with pytest.raises(DecodeError, match=r"Workload ml/train: spec.podGroups\[0\]\.policy"):
        decode_workload(workload)


@pytest.mark.parametrize(
    ("pod", "key"),
    [
        pytest.param(
            {"metadata": {"namespace": "ml", "labels": {POD_GROUP_LABEL: "job-a"}}},
            "ml/job-a",
            id="PodGroup label",
        ),
        pytest.param(
            {
                "metadata": {"namespace": "ml"},
                "spec": {"workloadRef": {"name": "train", "podGroup": "workers"}},
            },
            "ml/train/workers",
            id="workloadRef",
        ),
        pytest.param(
            {
                "metadata": {"namespace": "ml", "labels": {POD_GROUP_LABEL: "job-a"}},
                "spec": {"workloadRef": {"name": "train", "podGroup": "workers"}},
            },
            "ml/job-a",
            id="both: the label first",
        ),
        pytest.param({"metadata": {"namespace": "ml", "labels": {}}}, None, id="not a member"),
        pytest.param(
            {"metadata": {}, "spec": {"workloadRef": {"name": "train"}}},
            None,
            id="workloadRef without a podGroup",
        ),
    ],
)
def test_gang_key_of(pod: dict[str, Any], key: str | None) -> None:
    assert gang_key_of(pod) == key
