"""The bind ceiling: a trivial binder that places pods round-robin with no scheduling at all.

Why: a scheduler can never be faster than the API server lets anything bind. Measuring
that ceiling on the same backend, in the same run, with the same in-flight limit and the
same counting, turns "N pods/s" into "X % of what this server allows".

The binder runs as its own process (``asched bench binder``), in the scheduler's place:
it LISTs the nodes once, then LIST+WATCHes unbound pods of its scheduler name
(``fieldSelector=spec.schedulerName=NAME,spec.nodeName=``) and POSTs a Binding for each
to the next node in turn, ``--in-flight`` at a time. With ``--ready-file F`` it writes F
once it has listed, then waits for SIGUSR1 before binding anything, so the runner's
clock starts after the process's start-up; it stops on SIGTERM. 409 (already bound) and 404 (gone) are final; other
failures are retried after 50 ms.

Two modes, chosen by the runner (``--ceiling``):

* ``bind`` (default): the ceiling pods are all created first, then the binder starts; the
  figure is the server's bare bind rate (the "about 2,000 binds/s" of the anchors).
* ``pipeline``: the binder starts first and the pods are created while it runs, exactly
  as the measured pods are while the scheduler runs: everything but the decisions.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import Any, Final

from asched.tools.backends.process import Child
from asched.tools.backends.rest import RestClient

logger = logging.getLogger(__name__)

CEILING_SCHEDULER_NAME: Final = "bench-ceiling"
_RETRY_DELAY: Final = 0.05


def _schedulable(node: dict[str, Any]) -> bool:
    return bool((node.get("status") or {}).get("allocatable")) and not (
        (node.get("spec") or {}).get("unschedulable")
    )


class Binder:
    """Round-robin binding of every unbound pod of one scheduler name."""

    def __init__(self, rest: RestClient, scheduler_name: str, in_flight: int) -> None:
        self.rest = rest
        self.selector = f"spec.schedulerName={scheduler_name},spec.nodeName="
        self.in_flight = max(1, in_flight)
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.seen: set[str] = set()
        self.nodes: list[str] = []
        self.next_node = 0
        self.bound = 0
        self.errors = 0

    def _offer(self, pod: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid", ""))
        if uid in self.seen or (pod.get("spec") or {}).get("nodeName"):
            return
        self.seen.add(uid)
        self.queue.put_nowait((str(meta["namespace"]), str(meta["name"])))

    async def prepare(self) -> str:
        """LIST nodes and the pods waiting; return the pods' resourceVersion."""
        nodes = await self.rest.list_all("/api/v1/nodes")
        self.nodes = [str(n["metadata"]["name"]) for n in nodes if _schedulable(n)]
        if not self.nodes:
            raise RuntimeError("the bind-ceiling binder found no schedulable node")
        version = ""
        token: str | None = None
        while True:
            chunk = await self.rest.list(
                "/api/v1/pods", field_selector=self.selector, limit=500, continue_=token
            )
            for pod in chunk.get("items") or []:
                self._offer(pod)
            meta = chunk.get("metadata") or {}
            version = version or str(meta.get("resourceVersion", ""))
            token = meta.get("continue")
            if not token:
                return version

    async def watch(self, version: str) -> None:
        """Offer every pod the watch shows (re-watching from the last version on close)."""
        while True:
            async for event in self.rest.watch(
                "/api/v1/pods", resource_version=version, field_selector=self.selector
            ):
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    version = await self.prepare()
                    break
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") in ("ADDED", "MODIFIED"):
                    self._offer(obj)

    async def work(self) -> None:
        """One of ``in_flight`` workers: bind pods as they come, to the next node in turn."""
        while True:
            namespace, name = await self.queue.get()
            node = self.nodes[self.next_node % len(self.nodes)]
            self.next_node += 1
            response = await self.rest.bind_raw(namespace, name, node)
            if response.ok:
                self.bound += 1
            elif response.status in (404, 409):
                pass
            else:
                self.errors += 1
                await asyncio.sleep(_RETRY_DELAY)
                self.queue.put_nowait((namespace, name))


async def serve(args: argparse.Namespace) -> int:
    """Run the binder until SIGTERM/SIGINT."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    go = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    loop.add_signal_handler(signal.SIGUSR1, go.set)
    async with RestClient.from_kubeconfig(args.kubeconfig, connections=args.in_flight + 4) as rest:
        binder = Binder(rest, args.scheduler_name, args.in_flight)
        version = await binder.prepare()
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(binder.watch(version), name="binder watch")]
            if args.ready_file is not None:
                await asyncio.to_thread(args.ready_file.write_text, "ready\n")
                await go.wait()
            tasks += [
                group.create_task(binder.work(), name=f"binder {n}")
                for n in range(binder.in_flight)
            ]
            await stopping.wait()
            for task in tasks:
                task.cancel()
    print(f"bound {binder.bound}, errors {binder.errors}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Entry point of ``asched bench binder``."""
    import uvloop

    return uvloop.run(serve(args))


def start_binder(kubeconfig: Path, workdir: Path, *, in_flight: int) -> tuple[Child, Path]:
    """Start the binder process; return it and its ready file (poll for it, then send the
    process SIGUSR1 to let it bind)."""
    ready = workdir / "binder.ready"
    ready.unlink(missing_ok=True)
    argv = [
        sys.executable,
        "-m",
        "asched",
        "bench",
        "binder",
        "--kubeconfig",
        str(kubeconfig),
        "--in-flight",
        str(in_flight),
        "--ready-file",
        str(ready),
    ]
    return Child("bench binder", argv, workdir / "binder.log"), ready
