"""Which KubeSchedulerConfiguration ``asched explain`` answers with, and saying so.

Order: ``--config FILE`` wins. Against a live cluster, without it, the ConfigMap a
deployed asched runs with (``--config-map NAMESPACE/NAME``, default
:data:`DEFAULT_CONFIG_MAP`, the one ``deploy/configmap.yaml`` ships, key
:data:`CONFIG_MAP_KEY`). Otherwise the default profile.

A ConfigMap named with ``--config-map`` must be there and readable (an error otherwise);
the default one is only looked for: when it is absent, or cannot be read (forbidden),
the default profile is used and the reason is part of :meth:`ConfigChoice.describe`, so
the output never hides which configuration produced the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import quote

from asched import textfile
from asched.config.load import load_config
from asched.config.types import SchedulerConfig
from asched.errors import ApiError, InputError
from asched.explain.live import LiveReadError, Reader, describe_failure
from asched.framework import registry

#: The ConfigMap ``deploy/configmap.yaml`` ships: (namespace, name).
DEFAULT_CONFIG_MAP: Final = ("kube-system", "asched-config")

#: The key of that ConfigMap holding the KubeSchedulerConfiguration (mounted as
#: ``/etc/asched/config.yaml`` by ``deploy/deployment.yaml``).
CONFIG_MAP_KEY: Final = "config.yaml"

Source = Literal["file", "ConfigMap", "default"]


@dataclass(frozen=True, slots=True)
class ConfigChoice:
    """The configuration used, and where it came from.

    ``source``: ``file`` (``--config``), ``ConfigMap`` or ``default``; ``name``: the file,
    or ``namespace/name`` of the ConfigMap (None for the default); ``note``: why the
    default was used when a ConfigMap was looked for.
    """

    config: SchedulerConfig
    source: Source
    name: str | None = None
    note: str = ""

    def describe(self) -> str:
        """One line for the table output."""
        if self.source == "file":
            return f"--config {self.name}"
        if self.source == "ConfigMap":
            return f"ConfigMap {self.name} (key {CONFIG_MAP_KEY})"
        return f"the default profile ({self.note})" if self.note else "the default profile"

    def to_json(self) -> dict[str, Any]:
        """The ``configuration`` field of ``-o json``."""
        out: dict[str, Any] = {"source": self.source, "name": self.name}
        if self.source == "ConfigMap":
            out["key"] = CONFIG_MAP_KEY
        if self.note:
            out["note"] = self.note
        return out


def from_file(path: str | None) -> ConfigChoice:
    """``--config FILE``, or the default profile when None."""
    config = registry.configuration(path)
    return ConfigChoice(config, "file", path) if path else ConfigChoice(config, "default")


def parse_config_map(text: str) -> tuple[str, str]:
    """``NAMESPACE/NAME`` -> (namespace, name); InputError naming ``--config-map``."""
    namespace, _, name = text.partition("/")
    if not namespace or not name or "/" in name:
        raise InputError(f"--config-map: expected NAMESPACE/NAME, got {text!r}")
    return namespace, name


def _from_data(data: Any, where: str) -> SchedulerConfig:
    """The configuration in a ConfigMap's ``data`` (InputError naming it and the key)."""
    if not isinstance(data, dict) or not isinstance(data.get(CONFIG_MAP_KEY), str):
        keys = ", ".join(sorted(data)) if isinstance(data, dict) and data else "none"
        raise InputError(f"{where}: no data key {CONFIG_MAP_KEY!r} (keys: {keys})")
    source = f"{where} key {CONFIG_MAP_KEY}"
    document = textfile.parse_yaml(data[CONFIG_MAP_KEY], source)
    if document is not None and not isinstance(document, dict):
        raise InputError(f"{source}: a KubeSchedulerConfiguration must be an object")
    return load_config(document, catalogue=registry.installed().catalogue, source=source)


async def from_cluster(reader: Reader, path: str | None, config_map: str | None) -> ConfigChoice:
    """The configuration for a live answer (see the module docstring).

    Raises
    ------
    InputError
        ``--config`` or the ConfigMap does not hold a valid configuration, or a
        ConfigMap named with ``--config-map`` is not there.
    LiveReadError
        A ConfigMap named with ``--config-map`` cannot be read.
    """
    if path is not None:
        return from_file(path)
    explicit = config_map is not None
    namespace, name = DEFAULT_CONFIG_MAP if config_map is None else parse_config_map(config_map)
    where = f"ConfigMap {namespace}/{name}"
    url = f"/api/v1/namespaces/{quote(namespace, safe='')}/configmaps/{quote(name, safe='')}"
    try:
        found = await reader.get_json(url)
    except ApiError as exc:
        if exc.status == 404 and explicit:
            raise InputError(
                f'configmaps "{name}" not found in namespace "{namespace}" (--config-map)'
            ) from None
        if exc.status == 404:
            note = f"no {where}"
        elif explicit:
            action = f'get configmaps "{name}" in namespace "{namespace}"'
            raise LiveReadError(describe_failure(exc, action, "--config-map")) from None
        else:
            note = f"{where} not read: {describe_failure(exc, f'get {where}')}"
        return ConfigChoice(registry.configuration(None), "default", note=note)
    config = _from_data(found.get("data"), where)
    return ConfigChoice(config, "ConfigMap", f"{namespace}/{name}")
