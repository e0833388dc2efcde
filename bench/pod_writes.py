"""Count the writes to the pods of one namespace while a benchmark runs (issue 10).

Usage::

    python bench/pod_writes.py KUBECONFIG NAMESPACE [--out events.json]

Watches ``/api/v1/pods`` from now until SIGTERM or SIGINT, then prints, for the pods of
NAMESPACE created meanwhile: how many, over how long, the MODIFIED events they got (each
one a write to the pod) up to half a second after the last one was created (a benchmark's
cleanup deletes come later and are not counted), per second on average and over the last
10 s, and per pod (mean and max). With ``--out`` the raw events are written as JSON.

Used with ``asched bench run unschedulable-1000n-30000p --kubeconfig K`` against an
``asched sim``: the churn namespace ``bench-churn`` holds the pods that fit nowhere, so
the writes counted are exactly what the scheduler says about unschedulable pods.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import signal
import time
from typing import Any

from asched.tools.backends.rest import RestClient


async def collect(kubeconfig: str) -> list[tuple[float, str, str, str]]:
    """``(seconds since start, namespace, event type, name)`` per pod event, until a signal."""
    rest = RestClient.from_kubeconfig(kubeconfig)
    start = (await rest.list("/api/v1/pods", limit=1))["metadata"]["resourceVersion"]
    t0 = time.monotonic()
    seen: list[tuple[float, str, str, str]] = []
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def watch() -> None:
        version = start
        while True:
            async for event in rest.watch("/api/v1/pods", resource_version=version):
                meta: dict[str, Any] = event.get("object", {}).get("metadata", {})
                version = meta.get("resourceVersion", version)
                seen.append(
                    (time.monotonic() - t0, meta.get("namespace", ""), event["type"], meta["name"])
                )

    task = asyncio.create_task(watch())
    await stop.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await rest.close()
    return seen


def summary(events: list[tuple[float, str, str, str]], namespace: str) -> str:
    mine = [e for e in events if e[1] == namespace]
    added = [e for e in mine if e[2] == "ADDED"]
    if not added:
        return f"no pods were created in {namespace}"
    first, last = added[0][0], added[-1][0]
    writes = [e for e in mine if e[2] == "MODIFIED" and e[0] <= last + 0.5]
    span = max(last - first, 1e-9)
    recent = [e for e in writes if last - 10 <= e[0] <= last]
    per_pod = collections.Counter(e[3] for e in writes)
    return (
        f"{len(added)} pods over {span:.1f} s; {len(writes)} writes to them "
        f"({len(writes) / span:.1f}/s on average, {len(recent) / 10:.1f}/s in the last 10 s); "
        f"per pod {len(writes) / len(added):.2f} on average, {max(per_pod.values(), default=0)} at most"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kubeconfig")
    parser.add_argument("namespace")
    parser.add_argument("--out", help="write the raw events here (JSON)")
    args = parser.parse_args()
    events = asyncio.run(collect(args.kubeconfig))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            json.dump(events, out)
    print(summary(events, args.namespace))


if __name__ == "__main__":
    main()
