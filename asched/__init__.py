"""asched: an asyncio-native Kubernetes scheduler with a vectorised NumPy core.

The public surface is deliberately small; everything else lives in subpackages whose
layering is checked by import-linter (see ``.importlinter``).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
