"""The PodScheduled patch of a failed attempt: written only when it changes the pod's status.

Upstream's ``updatePod`` (``schedule_one.go``): ``podutil.UpdatePodCondition`` reports no
change for an equal condition (and keeps ``lastTransitionTime`` while the status is the
same), and ``nominatedNodeName`` is written only when it differs.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.decode import decode_pod
from asched.cluster.records import PodInfo
from asched.scheduler.status_patch import Said, after_write, status_patch
from asched.tools.bench import templates

STAMP = "2024-05-01T12:00:00Z"
OLD = "0/3 nodes are available: 3 Insufficient cpu."
NEW = "0/4 nodes are available: 4 Insufficient cpu."


def pod(
    condition: tuple[str, str, str] | None = None, nominated: str = "", uid: str = "u-1"
) -> PodInfo:
    raw = templates.pod("p")
    raw["metadata"]["uid"] = uid
    status: dict[str, Any] = {}
    if condition is not None:
        state, reason, message = condition
        status["conditions"] = [
            {"type": "Ready", "status": "False"},
            {
                "type": "PodScheduled",
                "status": state,
                "reason": reason,
                "message": message,
                "lastTransitionTime": "2024-05-01T11:00:00Z",
            },
        ]
    if nominated:
        status["nominatedNodeName"] = nominated
    raw["status"] = status
    return decode_pod(raw)


def condition(message: str, *, transition: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": message,
        "lastProbeTime": None,
    }
    if transition:
        entry["lastTransitionTime"] = STAMP
    return entry


UNSCHEDULABLE_OLD = ("False", "Unschedulable", OLD)


@pytest.mark.parametrize(
    ("seen", "said", "message", "nominated", "expected"),
    [
        pytest.param(
            pod(),
            None,
            OLD,
            None,
            {"status": {"conditions": [condition(OLD, transition=True)]}},
            id="first failure: new condition with lastTransitionTime",
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD),
            None,
            OLD,
            None,
            None,
            id="same condition on the pod (e.g. after a restart): no write",
        ),
        pytest.param(
            pod(),
            Said("u-1", OLD, None),
            OLD,
            None,
            None,
            id="same as last written, watch not caught up: no write",
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD),
            None,
            NEW,
            None,
            {"status": {"conditions": [condition(NEW, transition=False)]}},
            id="new message, still False: lastTransitionTime kept",
        ),
        pytest.param(
            pod(("True", "", "")),
            None,
            OLD,
            None,
            {"status": {"conditions": [condition(OLD, transition=True)]}},
            id="status changes: new lastTransitionTime",
        ),
        pytest.param(
            pod(("False", "SchedulerError", OLD)),
            None,
            OLD,
            None,
            {"status": {"conditions": [condition(OLD, transition=False)]}},
            id="new reason, still False",
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD),
            None,
            OLD,
            "",
            None,
            id='removing a nomination that is not there ("" is not None): no write',
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD, nominated="n1"),
            None,
            OLD,
            "",
            {"status": {"nominatedNodeName": None}},
            id="removing a nomination: only the nomination",
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD, nominated="n1"),
            None,
            OLD,
            "n1",
            None,
            id="the same nomination: no write",
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD, nominated="n1"),
            None,
            OLD,
            None,
            None,
            id="None leaves the nomination",
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD),
            None,
            NEW,
            "n2",
            {
                "status": {
                    "conditions": [condition(NEW, transition=False)],
                    "nominatedNodeName": "n2",
                }
            },
            id="new message and a nomination: one patch",
        ),
        pytest.param(
            pod(UNSCHEDULABLE_OLD, nominated="n1"),
            Said("u-1", OLD, ""),
            OLD,
            "n1",
            {"status": {"nominatedNodeName": "n1"}},
            id="nomination cleared since, stale copy still shows it: written again",
        ),
        pytest.param(
            pod(uid="u-2"),
            Said("u-1", OLD, "n1"),
            OLD,
            "",
            {"status": {"conditions": [condition(OLD, transition=True)]}},
            id="what was said of an earlier pod of the same name does not count",
        ),
    ],
)
def test_status_patch(
    seen: PodInfo,
    said: Said | None,
    message: str,
    nominated: str | None,
    expected: dict[str, Any] | None,
) -> None:
    assert status_patch(seen, message, nominated, said, STAMP) == expected


@pytest.mark.parametrize(
    ("said", "nominated", "expected"),
    [
        pytest.param(None, None, Said("u-1", NEW, None), id="nomination unknown"),
        pytest.param(Said("u-1", OLD, "n1"), None, Said("u-1", NEW, "n1"), id="nomination kept"),
        pytest.param(Said("u-1", OLD, "n1"), "", Said("u-1", NEW, ""), id="nomination removed"),
        pytest.param(Said("u-0", OLD, "n1"), None, Said("u-1", NEW, None), id="another pod's"),
    ],
)
def test_after_write(said: Said | None, nominated: str | None, expected: Said) -> None:
    assert after_write(pod(), NEW, nominated, said) == expected


ERROR_MESSAGE = "internal error in Filter: ZeroDivisionError: boom"


@pytest.mark.parametrize(
    ("seen", "said", "reason", "expected"),
    [
        pytest.param(
            pod(UNSCHEDULABLE_OLD),
            None,
            "SchedulerError",
            {
                "status": {
                    "conditions": [
                        {**condition(ERROR_MESSAGE, transition=False), "reason": "SchedulerError"}
                    ]
                }
            },
            id="an error after Unschedulable: new reason, status still False (time kept)",
        ),
        pytest.param(
            pod(("False", "SchedulerError", ERROR_MESSAGE)),
            None,
            "SchedulerError",
            None,
            id="the same error again, seen on the pod: no write",
        ),
        pytest.param(
            pod(),
            Said("u-1", ERROR_MESSAGE, None, "SchedulerError"),
            "SchedulerError",
            None,
            id="the same error again, as last said: no write",
        ),
        pytest.param(
            pod(),
            Said("u-1", ERROR_MESSAGE, None, "SchedulerError"),
            "Unschedulable",
            {"status": {"conditions": [condition(ERROR_MESSAGE, transition=False)]}},
            id="same message, reason back to Unschedulable: written",
        ),
    ],
)
def test_scheduler_error_reason(
    seen: PodInfo, said: Said | None, reason: str, expected: dict[str, Any] | None
) -> None:
    assert status_patch(seen, ERROR_MESSAGE, None, said, STAMP, reason) == expected
    assert after_write(seen, ERROR_MESSAGE, None, said, reason).reason == reason
