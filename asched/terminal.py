"""The console the commands print tables on.

In a terminal, rich uses the terminal's width. Piped (into a file, ``less``, a CI log),
rich would assume 80 columns and squeeze wide tables (a score column per plugin) until
nothing is readable; there asched uses :data:`PIPED_WIDTH` columns (``COLUMNS`` still wins).
"""

from __future__ import annotations

import os
from typing import Final

from rich.console import Console

PIPED_WIDTH: Final = 160


def console() -> Console:
    """A Console for tables (see the module docstring)."""
    plain = Console()
    if plain.is_terminal or os.environ.get("COLUMNS"):
        return plain
    return Console(width=PIPED_WIDTH)
