"""Label key and value syntax, as the API server and upstream's selector parser check it."""

from __future__ import annotations

import re
from typing import Final

_LABEL_NAME: Final = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_DNS_SUBDOMAIN: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


def valid_label_key(key: str) -> bool:
    """A qualified name: an optional DNS-subdomain prefix and ``/``, then a 63-character name."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_LABEL_NAME.match(name))


def valid_label_value(value: str) -> bool:
    """At most 63 characters of ``[A-Za-z0-9_.-]``, alphanumeric at both ends (or empty)."""
    return len(value) <= 63 and bool(_LABEL_NAME.match(value))
