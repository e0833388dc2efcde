"""Run this directory's async tests on uvloop, as the scheduler runs in production.

The hook is per directory on purpose: ``looptime`` (virtual time for unit tests) patches the
selector of asyncio's own loop and does not work on uvloop.
"""

from __future__ import annotations

import uvloop


def pytest_asyncio_loop_factories(config, item):
    return {"uvloop": uvloop.new_event_loop}
