"""The benchmark extender's rule: fail when crc32(name) % N == 0, priority (crc32 >> 8) % 11."""

from __future__ import annotations

import orjson
import pytest

from asched.tools.bench.hash_extender import MAX_PRIORITY, HashRule

NAMES = [f"node-{i}" for i in range(50)]


@pytest.mark.parametrize(
    ("name", "reject_every", "rejected", "priority"),
    [
        # crc32(b"node-0") = 1693789385: % 10 = 5 (passes); >> 8 = 6616364, % 11 = 7
        pytest.param("node-0", 10, False, 7, id="node-0-passes"),
        # crc32(b"node-5") = 346019910: % 10 = 0 (fails); >> 8 = 1351640, % 11 = 4
        pytest.param("node-5", 10, True, 4, id="node-5-fails-mod-10"),
        # crc32(b"node-6") = 2375453180: % 10 = 0 (fails); >> 8 = 9279113, % 11 = 8
        pytest.param("node-6", 10, True, 8, id="node-6-fails-mod-10"),
        # 346019910 % 4 = 2: node-5 passes a modulus of 4
        pytest.param("node-5", 4, False, 4, id="node-5-passes-mod-4"),
        # 0: nothing fails; the priority does not depend on the modulus
        pytest.param("node-5", 0, False, 4, id="reject-none"),
        # crc32(b"node-1") = 334634079: % 1 = 0 (a modulus of 1 fails every node); >> 8 = 1307164, % 11 = 1
        pytest.param("node-1", 1, True, 1, id="reject-all"),
    ],
)
def test_rule(name: str, reject_every: int, rejected: bool, priority: int) -> None:
    rule = HashRule(reject_every)
    assert rule.rejects(name) is rejected
    assert rule.priority(name) == priority


def test_split_keeps_order_and_partitions() -> None:
    rule = HashRule(10)
    passed, failed = rule.split(NAMES)
    # Of node-0..node-49, exactly node-5, node-6 and node-13 have crc32 % 10 == 0.
    assert failed == ["node-5", "node-6", "node-13"]
    assert passed == [n for n in NAMES if n not in failed]


def test_priorities_json_is_a_host_priority_list() -> None:
    rule = HashRule(10)
    answer = orjson.loads(rule.priorities(["node-0", "node-5", "node-0"]))
    assert answer == [
        {"Host": "node-0", "Score": 7},
        {"Host": "node-5", "Score": 4},
        {"Host": "node-0", "Score": 7},
    ]
    assert orjson.loads(rule.priorities([])) == []
    scores = [entry["Score"] for entry in orjson.loads(rule.priorities(NAMES))]
    assert all(0 <= s <= MAX_PRIORITY for s in scores)
    assert len(set(scores)) > 5  # spread over 0..10, not one value


def test_a_negative_modulus_is_refused() -> None:
    with pytest.raises(ValueError, match="reject_every must be >= 0, got -1"):
        HashRule(-1)
