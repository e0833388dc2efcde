"""`asched bench extender` as the benchmark starts it: a process, over real HTTP(S).

The process is started by :class:`ExtenderChild` (what ``asched bench run`` uses) and
called the way kube-scheduler calls an extender: POST ``/filter`` and ``/prioritize``
with ``ExtenderArgs`` (node names when nodeCacheCapable, full Nodes otherwise). Answers
are checked against the rule (crc32(name) % 10 == 0 fails; priority (crc32 >> 8) % 11).
Latency is a sleep per call: only a lower bound is asserted, never an upper one.
"""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from asched.tools.bench.extender_child import ExtenderChild, ExtenderOptions, call_figures
from asched.tools.bench.hash_extender import REASON

pytestmark = pytest.mark.timeout(120)

NAMES = [f"node-{i}" for i in range(50)]
# Of node-0..node-49, crc32 % 10 == 0 for exactly these (tests/tools/unit_bench).
REJECTED = ["node-5", "node-6", "node-13"]
POD = {"metadata": {"name": "p", "namespace": "default", "uid": "u-1"}, "spec": {}}


@pytest.fixture(scope="module")
def extender(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtenderChild]:
    """One process for the module: 10 ms per call, rejects 1 in 10 (by the hash)."""
    child = ExtenderChild(
        ExtenderOptions(latency_ms=10, reject_every=10), tmp_path_factory.mktemp("extender")
    )
    with child:
        yield child


async def post(child: ExtenderChild, verb: str, body: Any) -> tuple[int, Any]:
    context: ssl.SSLContext | bool = (
        ssl.create_default_context(cadata=child.ca_pem.decode()) if child.ca_pem else True
    )
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context)) as session,
        session.post(f"{child.url}/{verb}", data=orjson.dumps(body)) as response,
    ):
        raw = await response.read()
        try:
            return response.status, orjson.loads(raw)
        except orjson.JSONDecodeError:
            return response.status, raw.decode()


@pytest.mark.parametrize(
    ("verb", "body", "expected"),
    [
        pytest.param(
            "filter",
            {"Pod": POD, "NodeNames": NAMES},
            {
                "NodeNames": [n for n in NAMES if n not in REJECTED],
                "FailedNodes": dict.fromkeys(REJECTED, REASON),
                "FailedAndUnresolvableNodes": {},
                "Error": "",
            },
            id="filter-node-names",
        ),
        pytest.param(
            "filter",
            {"Pod": POD, "Nodes": {"items": [{"metadata": {"name": n}} for n in NAMES[:7]]}},
            {
                # node-0..node-6: node-5 and node-6 fail; the Node objects come back as sent
                "Nodes": {
                    "metadata": {},
                    "items": [{"metadata": {"name": f"node-{i}"}} for i in range(5)],
                },
                "FailedNodes": {"node-5": REASON, "node-6": REASON},
                "FailedAndUnresolvableNodes": {},
                "Error": "",
            },
            id="filter-full-nodes",
        ),
        pytest.param(
            "prioritize",
            {"Pod": POD, "NodeNames": ["node-0", "node-1", "node-5"]},
            # (crc32 >> 8) % 11: node-0 7, node-1 1, node-5 4 (tests/tools/unit_bench)
            [
                {"Host": "node-0", "Score": 7},
                {"Host": "node-1", "Score": 1},
                {"Host": "node-5", "Score": 4},
            ],
            id="prioritize-node-names",
        ),
        pytest.param(
            "prioritize",
            {"Pod": POD, "NodeNames": []},
            [],
            id="prioritize-no-nodes",
        ),
    ],
)
async def test_answers(extender: ExtenderChild, verb: str, body: Any, expected: Any) -> None:
    status, answer = await post(extender, verb, body)
    assert status == 200
    assert answer == expected


async def test_every_call_waits_its_latency(extender: ExtenderChild) -> None:
    # 10 ms per call: 5 calls one after another take at least 50 ms.
    started = time.monotonic()
    for _ in range(5):
        status, _answer = await post(extender, "filter", {"Pod": POD, "NodeNames": NAMES})
        assert status == 200
    assert time.monotonic() - started >= 0.050


async def test_stats_count_the_calls_and_concurrent_calls_overlap(tmp_path: Path) -> None:
    # 1 s per call: four calls sent together are all in the server at once (a sleep each,
    # not a queue), which /stats reports as max_in_flight.
    with ExtenderChild(ExtenderOptions(latency_ms=1000, reject_every=0), tmp_path) as child:
        before = await child.stats()
        body = {"Pod": POD, "NodeNames": NAMES}
        answers = await asyncio.gather(
            post(child, "filter", body),
            post(child, "filter", body),
            post(child, "prioritize", body),
            post(child, "prioritize", {"Pod": POD, "NodeNames": NAMES[:10]}),
        )
        assert [status for status, _ in answers] == [200] * 4
        figures = call_figures(before, await child.stats(), pods=2)
    assert figures["calls"] == {"filter": 2, "prioritize": 2}
    # names: 50 + 50 in filter calls, 50 + 10 in prioritize calls
    assert figures["names"] == {"filter": 100, "prioritize": 60}
    assert figures["calls_per_pod"] == 1.0  # 2 filter calls / 2 pods
    assert figures["names_per_call"] == 50.0
    assert figures["max_in_flight"] >= 2
    assert figures["bad_requests"] == 0
    assert figures["cpu_ms_per_call"] is not None
    assert figures["cpu_ms_per_call"] > 0


@pytest.mark.parametrize(
    ("verb", "body", "status", "message"),
    [
        pytest.param("filter", "not an object", 400, "filter: bad ExtenderArgs", id="not-args"),
        pytest.param(
            "prioritize",
            {"NodeNames": "node-0"},
            400,
            "prioritize: bad ExtenderArgs: NodeNames must be a list, got str",
            id="names-not-a-list",
        ),
        pytest.param(
            "filter",
            {"NodeNames": [1, 2]},
            400,
            "filter: bad ExtenderArgs",
            id="names-not-strings",
        ),
        pytest.param("bind", {}, 404, "unknown path '/bind'", id="unknown-verb"),
    ],
)
async def test_bad_requests_get_a_one_line_answer_and_the_server_keeps_serving(
    extender: ExtenderChild, verb: str, body: Any, status: int, message: str
) -> None:
    got, text = await post(extender, verb, body)
    assert got == status
    assert isinstance(text, str)
    assert text.startswith(message)
    assert "\n" not in text
    again, _answer = await post(extender, "filter", {"Pod": POD, "NodeNames": NAMES})
    assert again == 200


async def test_https_with_its_throw_away_ca(tmp_path: Path) -> None:
    with ExtenderChild(ExtenderOptions(latency_ms=0, tls=True), tmp_path) as child:
        assert child.url.startswith("https://127.0.0.1:")
        assert child.ca_pem is not None
        assert child.entry()["tlsConfig"]["caData"]
        status, answer = await post(child, "filter", {"Pod": POD, "NodeNames": NAMES})
        assert status == 200
        assert answer["FailedNodes"] == dict.fromkeys(REJECTED, REASON)
        assert (await child.stats())["calls"]["filter"] == 1


def test_sigterm_stops_it_with_status_0(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "asched", "bench", "extender", "--ready-file", str(ready)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert process.poll() is None, process.communicate()[0]
            assert time.monotonic() < deadline, "the extender did not get ready in 60 s"
            time.sleep(0.05)
        info = orjson.loads(ready.read_bytes())
        assert info["pid"] == process.pid
        assert info["url"].startswith("http://127.0.0.1:")
        os.kill(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, output
    assert f"listening on {info['url']}" in output.decode()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--latency-ms", "-1"],
            "asched bench extender: --latency-ms must be >= 0, got -1.0",
            id="negative-latency",
        ),
        pytest.param(
            ["--reject-every", "-3"],
            "asched bench extender: --reject-every must be >= 0, got -3",
            id="negative-modulus",
        ),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "asched", "bench", "extender", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == message
