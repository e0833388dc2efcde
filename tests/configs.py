"""Configuration loading for tests: the loaders with this installation's plugin catalogue."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from asched.config import load
from asched.config.types import SchedulerConfig
from asched.framework.registry import installed

CATALOGUE = installed().catalogue


def load_config(data: Mapping[str, Any] | None, *, source: str = "") -> SchedulerConfig:
    return load.load_config(data, catalogue=CATALOGUE, source=source)


def load_config_file(path: str | os.PathLike[str]) -> SchedulerConfig:
    return load.load_config_file(path, catalogue=CATALOGUE)


def default_config() -> SchedulerConfig:
    return load.default_config(CATALOGUE)
