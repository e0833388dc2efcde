"""Logging set-up: text or JSON lines, lazy %-formatting, never a token in a line.

Per-pod decisions are DEBUG, lifecycle is INFO, recoverable anomalies WARNING. The
JSON formatter keeps ``extra`` context (``pod``, ``node``, ``profile``) as fields.
"""

from __future__ import annotations

import logging
import re
import sys
import time

import orjson

_TOKEN = re.compile(r"(?i)(bearer\s+|token[\"'=:\s]+)[A-Za-z0-9._~+/=-]{8,}")
_CONTEXT_FIELDS = ("pod", "node", "profile", "cycle", "uid")


def redact(text: str) -> str:
    """Return ``text`` with anything that looks like a bearer token replaced."""
    return _TOKEN.sub(lambda m: f"{m.group(1)}<redacted>", text)


class TextFormatter(logging.Formatter):
    """``time level logger message key=value...`` with tokens redacted."""

    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        extras = " ".join(
            f"{key}={getattr(record, key)}" for key in _CONTEXT_FIELDS if hasattr(record, key)
        )
        return redact(f"{base} {extras}" if extras else base)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg and the context fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        for key in _CONTEXT_FIELDS:
            if hasattr(record, key):
                entry[key] = getattr(record, key)
        if record.exc_info:
            entry["exc"] = redact(self.formatException(record.exc_info))
        return orjson.dumps(entry).decode()


def configure(*, level: str = "WARNING", fmt: str = "text") -> None:
    """Install one stderr handler on the root logger."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
