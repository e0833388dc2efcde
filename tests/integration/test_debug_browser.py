"""The debug pages in headless Chromium, as a person uses them, on a live scheduler (sim).

Driver: Playwright for Python (PyPI) driving Debian's ``/usr/bin/chromium`` through
``executable_path``: no browser download. Outside CI the test is skipped, with the reason,
when that browser or Playwright is missing; under ``CI=true`` it must run (.ci/run
installs chromium).

Three nodes (2, 4 and 8 cpu); a 1-cpu pod goes to the 8-cpu node (least allocated: the
highest NodeResourcesFit score), a 16-cpu pod fits nowhere. From the queue page a person
follows the unschedulable pod's link to its decision and reads NodeResourcesFit's reason
on each node; from the decisions page the other pod's decision shows the chosen node,
and sorting by total puts the nodes in the order of their totals.

``ASCHED_DEBUG_SCREENSHOTS=DIR`` also writes the screenshots there (docs/img holds the
ones docs/debugging.md shows).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from debug_harness import debugged_scheduler, pod_decided

CHROMIUM = Path("/usr/bin/chromium")
VIEWPORT = {"width": 1100, "height": 560}


def _browser_or_skip() -> Any:
    """Playwright's async API, or a skip outside CI (a failure under CI=true)."""
    missing = None
    try:
        from playwright import async_api
    except ImportError:
        missing = "playwright is not installed (pip install -e '.[test]')"
    if missing is None and not CHROMIUM.exists():
        missing = f"{CHROMIUM} is missing (apt-get install chromium)"
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests must run under CI: {missing}")
        pytest.skip(missing)
    return async_api


async def _shot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    await page.screenshot(path=str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    target = os.environ.get("ASCHED_DEBUG_SCREENSHOTS")
    if target:
        shutil.copy(path, Path(target) / path.name)


@pytest.mark.parametrize("backend", [pytest.param("sim", id="sim")])
async def test_queue_to_decision_in_a_browser(cluster: Any, tmp_path: Path) -> None:
    async_api = _browser_or_skip()
    name = cluster.unique_name("sched")
    tiny, medium, large = (cluster.unique_name(n) for n in ("tiny", "medium", "large"))
    for node, cpu in ((tiny, "2"), (medium, "4"), (large, "8")):
        await cluster.create_node(node, cpu=cpu, memory="16Gi")
    async with debugged_scheduler(cluster, name) as debugged:
        web, huge = cluster.unique_name("web"), cluster.unique_name("huge")
        await cluster.create_pod(web, scheduler_name=name, cpu="1", memory="1Gi")
        await cluster.create_pod(huge, scheduler_name=name, cpu="16", memory="1Gi")
        web_key, huge_key = f"{cluster.namespace}/{web}", f"{cluster.namespace}/{huge}"
        chosen = await pod_decided(debugged, web_key)
        await pod_decided(debugged, huge_key)
        totals = {n: v["total"] for n, v in chosen["nodes"].items() if v["feasible"]}

        async with async_api.async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--no-sandbox"]
            )
            try:
                page = await browser.new_page(viewport=VIEWPORT)
                await page.goto(debugged.base + "/debug/queue")
                link = page.locator(f'a[data-pod="{huge_key}"]')
                await link.wait_for(timeout=15_000)
                row = page.locator("#pods tbody tr", has=link)
                assert "Insufficient cpu" in await row.inner_text()
                assert (await row.get_attribute("data-place")) in (
                    "unschedulable",
                    "backoff",
                    "active",
                )
                await _shot(page, tmp_path, "debug-queue")

                await link.click()
                await page.wait_for_selector("body[data-loaded='1']")
                assert (await page.locator("#verdict").inner_text()).startswith("unschedulable: 0/")
                # no victim anywhere: preemption says why once (its message carries
                # upstream's own "preemption: " prefix)
                notes = await page.locator("p.note").all_inner_texts()
                assert any(n.startswith("preemption: 0/3 nodes are available") for n in notes), (
                    notes
                )
                assert not any("preemption: preemption" in n for n in notes), notes
                for node in (tiny, medium, large):
                    cells = page.locator(f'tr[data-node="{node}"] td')
                    assert await cells.all_inner_texts() == [
                        node,
                        "rejected",
                        "",
                        "NodeResourcesFit",
                        "Insufficient cpu",
                    ]
                await _shot(page, tmp_path, "debug-decision-unschedulable")

                await page.goto(debugged.base + "/debug/decisions")
                await (
                    page.locator("#decisions tbody tr", has_text=web_key).first.locator("a").click()
                )
                await page.wait_for_selector("body[data-loaded='1']")
                # 1 cpu of 8 leaves the large node the least allocated: the highest total
                assert await page.locator("#verdict").inner_text() == f"selected: {large}"
                selected = page.locator("tr.selected")
                assert await selected.get_attribute("data-node") == large
                total = page.locator("#nodes th", has_text="total")
                await total.click()
                ascending = sorted(totals, key=lambda n: (totals[n], n))
                names = await page.locator("#nodes tbody tr").evaluate_all(
                    "rows => rows.map(r => r.dataset.node)"
                )
                assert [totals[n] for n in names] == sorted(totals[n] for n in names)
                assert names == ascending or [totals[n] for n in names] == [
                    totals[n] for n in ascending
                ]
                await total.click()
                names = await page.locator("#nodes tbody tr").evaluate_all(
                    "rows => rows.map(r => r.dataset.node)"
                )
                assert names[0] == large
                assert await total.get_attribute("aria-sort") == "descending"
                await _shot(page, tmp_path, "debug-decision-scheduled")

                await page.goto(debugged.base + "/debug/now")
                await page.wait_for_selector("body[data-loaded='1']")
                facts = await page.locator("#facts").inner_text()
                assert f"identity: {debugged.app.options.identity}" in facts
                assert "leader election off" in facts
                await _shot(page, tmp_path, "debug-now")
            finally:
                await browser.close()
