"""Which nodes hold which container images, for ImageLocality.

Per image name: the rows that list it and the size each reports. ``spread`` of a name is
how many nodes list it; ImageLocality scales the size by ``spread / total nodes``
(upstream: scaledImageScore). Arrays per name are rebuilt lazily after a change, so a
scoring pass is a few scatter-adds over the rows that hold the pod's images, never a loop
over nodes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from asched.cluster.records import ImageState


class ImageIndex:
    """Image name -> {row: size}. Only :class:`~asched.cluster.table.NodeTable` writes."""

    def __init__(self) -> None:
        self._holders: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]] = {}
        self._row_names: dict[int, tuple[str, ...]] = {}

    def set_row(self, row: int, images: tuple[ImageState, ...]) -> None:
        self.clear_row(row)
        names: list[str] = []
        for image in images:
            for name in image.names:
                self._holders.setdefault(name, {})[row] = image.size
                self._arrays.pop(name, None)
                names.append(name)
        if names:
            self._row_names[row] = tuple(names)

    def clear_row(self, row: int) -> None:
        for name in self._row_names.pop(row, ()):
            holders = self._holders.get(name)
            if holders is not None:
                holders.pop(row, None)
                self._arrays.pop(name, None)
                if not holders:
                    del self._holders[name]

    def holders(self, name: str) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]] | None:
        """(rows, sizes in bytes) of the nodes listing ``name``, or None if none do."""
        found = self._arrays.get(name)
        if found is None:
            holders = self._holders.get(name)
            if not holders:
                return None
            rows = np.fromiter(holders.keys(), dtype=np.intp, count=len(holders))
            sizes = np.fromiter(holders.values(), dtype=np.int64, count=len(holders))
            found = self._arrays[name] = (rows, sizes)
        return found

    @property
    def empty(self) -> bool:
        return not self._holders
