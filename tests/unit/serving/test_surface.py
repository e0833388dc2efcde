"""asched.serving's public surface is pinned: other listeners (debug pages) build on it."""

from __future__ import annotations

import inspect

import asched.serving


def test_exported_members() -> None:
    assert sorted(asched.serving.__all__) == sorted(
        [
            "ALWAYS_ALLOW",
            "Plan",
            "ServerTLS",
            "delegated_auth",
            "is_loopback",
            "plan",
            "self_signed_hosts",
            "ssl_context_for",
        ]
    )
    assert all(hasattr(asched.serving, name) for name in asched.serving.__all__)


def test_the_middleware_factory_keywords() -> None:
    parameters = inspect.signature(asched.serving.delegated_auth).parameters
    assert list(parameters) == [
        "client",
        "always_allow",
        "cache_ttl",
        "allow_ttl",
        "deny_ttl",
        "clock",
    ]
    assert parameters["always_allow"].default == ("/healthz", "/readyz", "/livez")
    assert parameters["cache_ttl"].default == 10.0
