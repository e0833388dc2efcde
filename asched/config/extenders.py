"""``extenders``: scheduler extenders (upstream's ``Extender``), read and validated.

Fields, names and defaults as in ``kubescheduler.config.k8s.io/v1``: ``urlPrefix``,
``filterVerb``, ``prioritizeVerb``, ``preemptVerb``, ``bindVerb`` (an empty verb means the
extender does not offer that call), ``weight`` (no default: 0), ``enableHTTPS``,
``tlsConfig`` (``insecure``, ``serverName``, ``certFile``, ``keyFile``, ``caFile`` and the
base64-encoded ``certData``, ``keyData``, ``caData``, as JSON writes Go's ``[]byte``),
``httpTimeout`` (a duration; unset or ``0`` is upstream's 5 s), ``nodeCacheCapable``,
``managedResources[{name, ignoredByScheduler}]`` and ``ignorable``.

Upstream's rules (``validateExtenders``): ``weight`` > 0 when ``prioritizeVerb`` is set; at
most one extender has a ``bindVerb``; every managed resource name is a valid extended
resource name (a qualified name with a domain outside ``kubernetes.io``), unique across
all extenders.

Where asched is stricter than upstream, to fail at load rather than on every call or at
start-up: ``urlPrefix`` is required and must be an ``http://`` or ``https://`` URL with a
host; ``httpTimeout`` must not be negative (Go would silently mean "no timeout");
``tlsConfig.insecure`` cannot be combined with a CA, and a client certificate needs its
key and the other way round (client-go refuses both when the transport is built, which
stops kube-scheduler at start-up).

:func:`with_ignored_resources` applies ``ignoredByScheduler``: upstream replaces
NodeResourcesFit's ``ignoredResources`` in every profile with those resources.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from asched.cluster.resources import is_extended
from asched.config.duration import read_duration_ns
from asched.config.schema import Problems, Section, describe, is_qualified_name, quote
from asched.config.types import (
    DEFAULT_EXTENDER_TIMEOUT_SECONDS,
    ExtenderConfig,
    ExtenderTLSConfig,
    ManagedResource,
    NodeResourcesFitArgs,
    Profile,
)

EXTENDER_FIELDS: Final = frozenset(
    {
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "enableHTTPS",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    }
)
TLS_FIELDS: Final = frozenset(
    {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
)
MANAGED_RESOURCE_FIELDS: Final = frozenset({"name", "ignoredByScheduler"})

_FIT: Final = "NodeResourcesFit"
_NS_PER_SECOND: Final = 1_000_000_000


def _timeout_seconds(section: Section) -> float:
    """``httpTimeout`` in seconds: not negative; unset or 0 is upstream's default."""
    nanoseconds = read_duration_ns(section, "httpTimeout", 0, example="5s")
    if nanoseconds < 0:
        section.report(
            "httpTimeout", f"must not be negative, got {quote(section.get('httpTimeout'))}"
        )
        return DEFAULT_EXTENDER_TIMEOUT_SECONDS
    return nanoseconds / _NS_PER_SECOND if nanoseconds else DEFAULT_EXTENDER_TIMEOUT_SECONDS


def _url_prefix(section: Section) -> str:
    url = section.string("urlPrefix")
    if not url:
        if section.get("urlPrefix") in (None, ""):
            section.report("urlPrefix", "required")
        return url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        section.report(
            "urlPrefix",
            f'must be an "http://" or "https://" URL with a host, got {quote(url)}',
        )
    return url


def _pem_data(section: Section, key: str) -> bytes:
    value = section.get(key)
    if value is None:
        return b""
    if not isinstance(value, str):
        section.report(key, f"must be a base64 string, got {describe(value)}")
        return b""
    try:
        # Go's base64 decoder skips CR and LF; everything else must be standard base64
        return base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError) as exc:
        section.report(key, f"must be base64-encoded data ({exc})")
        return b""


def _read_tls(section: Section) -> ExtenderTLSConfig | None:
    if not section.raw:
        return None
    tls = ExtenderTLSConfig(
        insecure=section.boolean("insecure", default=False),
        server_name=section.string("serverName"),
        cert_file=section.string("certFile"),
        key_file=section.string("keyFile"),
        ca_file=section.string("caFile"),
        cert_data=_pem_data(section, "certData"),
        key_data=_pem_data(section, "keyData"),
        ca_data=_pem_data(section, "caData"),
    )
    if tls.insecure and (tls.ca_file or tls.ca_data):
        section.report("insecure", "cannot be combined with caFile or caData (a CA to verify with)")
    has_cert = bool(tls.cert_file or tls.cert_data)
    has_key = bool(tls.key_file or tls.key_data)
    if has_cert and not has_key:
        section.report("keyFile", "required with a client certificate")
    elif has_key and not has_cert:
        section.report("certFile", "required with a client key")
    return tls


def _is_extended_resource_name(name: str) -> bool:
    """``validateExtendedResourceName``: a qualified name that IsExtendedResourceName accepts."""
    return is_qualified_name(name) and is_extended(name) and is_qualified_name(f"requests.{name}")


def _read_managed(section: Section, seen: dict[str, str]) -> tuple[ManagedResource, ...]:
    out: list[ManagedResource] = []
    problems = section.problems
    for path, raw in section.items("managedResources"):
        entry = Section(problems, raw, path, MANAGED_RESOURCE_FIELDS)
        name = entry.string("name")
        ignored = entry.boolean("ignoredByScheduler", default=False)
        if not name:
            if entry.get("name") in (None, ""):
                problems.add(entry.at("name"), "required")
            continue
        if not _is_extended_resource_name(name):
            problems.add(
                entry.at("name"),
                "must be an extended resource name (a qualified name with a domain outside "
                f'kubernetes.io, e.g. "example.com/gpu"), got {quote(name)}',
            )
        if name in seen:
            problems.add(
                entry.at("name"),
                f"duplicate extender managed resource name {quote(name)} (first at {seen[name]})",
            )
        else:
            seen[name] = entry.at("name")
        out.append(ManagedResource(name, ignored))
    return tuple(out)


def _read_extender(section: Section, seen_resources: dict[str, str]) -> ExtenderConfig:
    url = _url_prefix(section)
    prioritize_verb = section.string("prioritizeVerb")
    weight = section.integer("weight", 0)
    if prioritize_verb and weight <= 0:
        section.report(
            "weight",
            f"must be greater than 0 when prioritizeVerb is set, got {weight}",
        )
    return ExtenderConfig(
        url_prefix=url,
        filter_verb=section.string("filterVerb"),
        preempt_verb=section.string("preemptVerb"),
        prioritize_verb=prioritize_verb,
        bind_verb=section.string("bindVerb"),
        weight=weight,
        enable_https=section.boolean("enableHTTPS", default=False),
        tls_config=_read_tls(section.section("tlsConfig", TLS_FIELDS)),
        http_timeout_seconds=_timeout_seconds(section),
        node_cache_capable=section.boolean("nodeCacheCapable", default=False),
        managed_resources=_read_managed(section, seen_resources),
        ignorable=section.boolean("ignorable", default=False),
    )


def read_extenders(top: Section) -> tuple[ExtenderConfig, ...]:
    """Read and validate the ``extenders`` list of the document's top level."""
    problems: Problems = top.problems
    seen_resources: dict[str, str] = {}
    extenders: list[ExtenderConfig] = []
    binders: list[str] = []
    for path, raw in top.items("extenders"):
        section = Section(problems, raw, path, EXTENDER_FIELDS)
        extender = _read_extender(section, seen_resources)
        if extender.bind_verb:
            binders.append(path)
        extenders.append(extender)
    if len(binders) > 1:
        problems.add(
            top.at("extenders"),
            f"only one extender can implement bind, found {len(binders)} ({', '.join(binders)})",
        )
    return tuple(extenders)


def ignored_resources(extenders: Sequence[ExtenderConfig]) -> tuple[str, ...]:
    """The managed resources marked ``ignoredByScheduler``, in configuration order."""
    return tuple(
        resource.name
        for extender in extenders
        for resource in extender.managed_resources
        if resource.ignored_by_scheduler
    )


def with_ignored_resources(
    profiles: Sequence[Profile], extenders: Sequence[ExtenderConfig]
) -> tuple[Profile, ...]:
    """The profiles with NodeResourcesFit's ``ignoredResources`` set as upstream sets them.

    When any managed resource is ``ignoredByScheduler``, upstream (``buildExtenders``)
    *replaces* every profile's NodeResourcesFit ``ignoredResources`` with the list of those
    resources. Upstream refuses to start when a profile has no NodeResourcesFit args; a
    profile that does not run NodeResourcesFit has nothing to ignore, so asched leaves it
    as it is.
    """
    ignored = ignored_resources(extenders)
    if not ignored:
        return tuple(profiles)
    out: list[Profile] = []
    for profile in profiles:
        args: Any = profile.plugin_args.get(_FIT)
        if isinstance(args, NodeResourcesFitArgs):
            plugin_args = dict(profile.plugin_args)
            plugin_args[_FIT] = dataclasses.replace(args, ignored_resources=ignored)
            profile = dataclasses.replace(profile, plugin_args=plugin_args)
        out.append(profile)
    return tuple(out)
