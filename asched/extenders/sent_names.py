"""The node names an extender call sends, with their encodings: what the fast readers of
:mod:`asched.extenders.fast` check an answer against.

* :class:`NameTable`: the table's node names in node order, each encoded once as a JSON
  fragment (:func:`json_fragments`); a consultation picks the names it sends from it
  (:meth:`NameTable.pick`) without reading a name string, their JSON array joined from
  the fragments in C (:func:`json_array`). A filter answer's failed names are placed by
  name in the table's order (:meth:`NameTable.kept`, :meth:`NameTable.located`).
* :class:`SentNames`: the names one call sends, in the order sent, a sequence of them.
  Their JSON array (:attr:`SentNames.json`) is the very bytes the request carries, which
  an answer in the order sent is compared with; the names themselves are decoded only
  when read.

Apart from the readers because they are the request's side: built by the consultation
before any call, and handed from one call to the next (a filter's survivors are the
:meth:`SentNames.subset` the prioritize call sends as they are).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import cast, overload

import numpy as np
import numpy.typing as npt
import orjson


def json_fragments(names: Sequence[str]) -> npt.NDArray[np.bytes_]:
    """Each name's JSON string and a comma (``b'"node-1",'``), NUL-padded to the longest
    (``S{w}``, ``(len(names),)``). JSON never holds a raw NUL, so any selection of them,
    joined and stripped of NULs, is the items of the selection's JSON array
    (:func:`json_array`)."""
    encoded = [orjson.dumps(name) + b"," for name in names]
    width = max(map(len, encoded), default=1)
    return np.array(encoded, dtype=f"S{width}")


def json_array(fragments: npt.NDArray[np.bytes_]) -> bytes:
    """``orjson.dumps`` of the names whose :func:`json_fragments` are ``fragments``."""
    items = fragments.tobytes().replace(b"\0", b"")
    return b"".join((b"[", memoryview(items)[:-1], b"]")) if items else b"[]"


class NameTable:
    """Node names in a fixed order (the table's node order), encoded once for every call
    that sends some of them (:meth:`pick`):

    * ``fragments`` (``S{w}``, ``(count,)``): the names' :func:`json_fragments`;
    * built on the first answer that fails some of the names picked from it,
      :attr:`position`: name -> its position in the order, so that the failed names are
      placed by one lookup each (:meth:`kept`), not by sorting the names sent call after
      call.
    """

    __slots__ = ("_names", "_position", "fragments")

    def __init__(self, names: list[str]) -> None:
        self._names = names
        self.fragments = json_fragments(names)
        self._position: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._names)

    @property
    def position(self) -> Mapping[str, int]:
        """Name -> its position in the order."""
        if self._position is None:
            self._position = dict(zip(self._names, range(len(self._names)), strict=True))
        return self._position

    def kept(self, picks: npt.NDArray[np.intp], names: list[str]) -> npt.NDArray[np.intp] | None:
        """The indices among ``picks`` (intp, ascending positions in the order) of the
        names picked that ``names`` does not name (intp, ascending); None when one of
        ``names`` was not picked, or is named twice. A few array operations over the
        order, whatever the number of names (each is looked up once, by name)."""
        found = list(map(self.position.get, names))
        if None in found:
            return None
        mask = np.zeros(len(self._names), dtype=np.bool_)
        mask[picks] = True
        mask[cast("list[int]", found)] = False
        positions = np.flatnonzero(mask[picks])
        # as many names left out as named: each named name was picked, and named once
        if positions.size + len(names) != picks.size:
            return None
        return positions

    def located(self, picks: npt.NDArray[np.intp], names: list[str]) -> npt.NDArray[np.intp] | None:
        """The indices among ``picks`` (intp, ascending positions in the order) of
        ``names``, in their order; None when one of them was not picked."""
        found = list(map(self.position.get, names))
        if None in found:
            return None
        positions = np.fromiter(cast("list[int]", found), np.intp, len(found))
        if not picks.size:
            return None if positions.size else positions
        index = np.searchsorted(picks, positions)
        np.minimum(index, picks.size - 1, out=index)
        if not (picks[index] == positions).all():
            return None
        return index

    def pick(self, picks: npt.NDArray[np.intp]) -> SentNames:
        """The names at ``picks`` (intp, ascending positions in the order) as
        :class:`SentNames`, their JSON joined from the fragments in C."""
        fragments = self.fragments[picks]
        return SentNames.picked(json_array(fragments), fragments, (self, picks))


class SentNames(Sequence[str]):
    """The node names one call sends, in the order sent: a sequence of them.

    Made from the names (``SentNames(names)``), or picked from a :class:`NameTable`
    (:meth:`picked`, what a consultation sends: the JSON array the request carries and
    the names' JSON fragments, from the table's names in node order, never touched one
    by one). Built on first use:
    :attr:`json` (the names as the request carries them), :attr:`names` (decoded from
    :attr:`json` when made from it) and :attr:`where` (name -> its index among the
    names, for answers read by name). :meth:`locate` places a filter answer's failed
    names: by name for picked names, else by their hashes.
    """

    __slots__ = (
        "_by_hash",
        "_count",
        "_fragments",
        "_given",
        "_json",
        "_names",
        "_sorted",
        "_source",
        "_where",
    )

    def __init__(self, names: Sequence[str]) -> None:
        self._given: Sequence[str] | None = names
        self._names: list[str] | None = names if type(names) is list else list(names)
        self._count = len(self._names)
        self._json: bytes | None = None
        self._where: dict[str, int] | None = None
        #: the hashes sorted, and the index of each among the names (built by locate)
        self._sorted: npt.NDArray[np.int64] | None = None
        self._by_hash: npt.NDArray[np.intp] | None = None
        self._fragments: npt.NDArray[np.bytes_] | None = None
        #: the NameTable the names were picked from, and their positions in it
        self._source: tuple[NameTable, npt.NDArray[np.intp]] | None = None

    @classmethod
    def picked(
        cls,
        json: bytes,
        fragments: npt.NDArray[np.bytes_],
        source: tuple[NameTable, npt.NDArray[np.intp]],
    ) -> SentNames:
        """The names picked from a :class:`NameTable` at ``source[1]`` (intp, ascending),
        whose JSON array is ``json`` (what ``orjson.dumps`` makes of them) and whose
        :func:`json_fragments` are ``fragments``: nothing is decoded until :attr:`names`
        is read, and they are placed by name."""
        sent = cls.__new__(cls)
        sent._given = sent._names = sent._where = sent._sorted = sent._by_hash = None
        sent._json = json
        sent._fragments = fragments
        sent._source = source
        sent._count = len(fragments)
        return sent

    def subset(
        self,
        positions: npt.NDArray[np.intp],
        json: bytes,
        fragments: npt.NDArray[np.bytes_] | None = None,
    ) -> SentNames:
        """The names at ``positions`` (intp, ascending), picked from the same
        :class:`NameTable`, whose JSON array the caller has checked is ``json`` (and whose
        fragments are ``fragments`` when the caller has picked them already); only for
        picked names."""
        assert self._source is not None
        assert self._fragments is not None
        if fragments is None:
            fragments = self._fragments[positions]
        table, picks = self._source
        return SentNames.picked(json, fragments, (table, picks[positions]))

    @property
    def source(self) -> tuple[NameTable, npt.NDArray[np.intp]] | None:
        """The :class:`NameTable` the names were picked from and their positions in it
        (intp, ascending), when picked (names placed by name, exactly); else None (names
        placed by hash, which a reader checks)."""
        return self._source

    @property
    def fragments(self) -> npt.NDArray[np.bytes_] | None:
        """Each name's :func:`json_fragments` entry, when picked (:meth:`picked`)."""
        return self._fragments

    def __eq__(self, other: object) -> bool:
        """Equal to names in the same order: other SentNames, a list or a tuple."""
        if isinstance(other, SentNames):
            return self.json == other.json
        if isinstance(other, list | tuple):
            return self.names == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self.names[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    @property
    def names(self) -> list[str]:
        """The names as a list (what :attr:`json` encodes)."""
        if self._names is None:
            assert self._json is not None
            self._names = orjson.loads(self._json)
        return self._names

    @property
    def given(self) -> Sequence[str]:
        """The names as the caller gave them (these SentNames when made from their JSON)."""
        return self._given if self._given is not None else self

    @property
    def json(self) -> bytes:
        """The names as a JSON array (``orjson.dumps``), as the request carries them.

        An answer's names are checked against these bytes, not against the name objects:
        the names sent are the table's strings, cold in the CPU's caches by the time the
        answer comes, while the answer's are fresh; comparing 500 of each touched the
        former one by one."""
        if self._json is None:
            self._json = orjson.dumps(self.names)
        return self._json

    @property
    def where(self) -> Mapping[str, int]:
        """Name -> its index among the names sent (keyed by exactly the names sent)."""
        if self._where is None:
            self._where = dict(zip(self.names, range(self._count), strict=True))
        return self._where

    def locate(self, names: list[str]) -> npt.NDArray[np.intp] | list[int] | None:
        """The indices of ``names`` among the names sent; None when one was not sent.

        Names picked from a :class:`NameTable` are placed through its positions. Others
        by their hashes (two names of one hash may be placed wrongly: a reader must check
        what it derives, as :func:`~asched.extenders.fast.fast_filter_result` checks its
        answer against the bytes sent), else through :attr:`where`."""
        if self._source is not None:
            return self._source[0].located(self._source[1], names)
        if self._sorted is None or self._by_hash is None:
            hashes = np.fromiter(map(hash, self.names), np.int64, self._count)
            self._by_hash = np.argsort(hashes, kind="stable")
            self._sorted = hashes[self._by_hash]
        wanted = np.fromiter(map(hash, names), np.int64, len(names))
        if self._sorted.size:
            at = np.searchsorted(self._sorted, wanted)
            np.minimum(at, self._sorted.size - 1, out=at)  # beyond every hash: caught below
            if (self._sorted[at] == wanted).all():
                return self._by_hash[at]
        found = list(map(self.where.get, names))
        return None if None in found else cast("list[int]", found)
