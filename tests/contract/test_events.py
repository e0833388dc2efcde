"""``events.k8s.io/v1`` Event creation (what a scheduler's FailedScheduling/Scheduled event is)."""

from __future__ import annotations

import re

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import now_rfc3339

MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def _event(namespace: str, pod: str, **overrides: object) -> dict[str, object]:
    event: dict[str, object] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"generateName": f"{pod}-", "namespace": namespace},
        "eventTime": now_rfc3339(micro=True),
        "reportingController": "asched",
        "reportingInstance": "asched-1",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "note": "0/1 nodes are available",
        "type": "Warning",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": pod},
    }
    event.update(overrides)
    return event


def _events_path(namespace: str) -> str:
    return f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"


async def test_event_with_microsecond_event_time_is_created(cluster):
    rest, ns = cluster.rest, cluster.namespace
    body = _event(ns, "p")

    created = await rest.create(_events_path(ns), body)

    assert created["kind"] == "Event"
    assert created["apiVersion"] == "events.k8s.io/v1"
    assert created["metadata"]["name"].startswith("p-")
    assert len(created["metadata"]["name"]) == len("p-") + 5  # generateName adds 5 characters
    assert created["eventTime"] == body["eventTime"]
    assert MICRO_TIME.match(created["eventTime"])
    assert created["regarding"] == body["regarding"]
    listed = await rest.list(_events_path(ns))
    assert [e["metadata"]["name"] for e in listed["items"]] == [created["metadata"]["name"]]


@pytest.mark.parametrize(
    ("change", "status", "reason"),
    [
        pytest.param(
            {"eventTime": "2024-01-02T03:04:05Z"},
            400,
            "BadRequest",
            id="eventTime without microseconds",
        ),
        pytest.param(
            {"metadata": {"generateName": "p."}}, 422, "Invalid", id="generateName ending in a dot"
        ),
        pytest.param({"reportingController": ""}, 422, "Invalid", id="empty reportingController"),
    ],
)
async def test_invalid_events_are_rejected(cluster, change, status, reason):
    rest, ns = cluster.rest, cluster.namespace
    body = _event(ns, "p", **change)
    if "metadata" in change:
        body["metadata"] = {**change["metadata"], "namespace": ns}

    with pytest.raises(StatusError) as caught:
        await rest.create(_events_path(ns), body)

    assert (caught.value.status, caught.value.reason) == (status, reason)
    assert (await rest.list(_events_path(ns)))["items"] == []
