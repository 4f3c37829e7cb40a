"""MeSH's supplementary concept records (SCRs, the ``C`` ids of most named compounds and many
rare diseases), each filed under one or more heading descriptors: built into their own file
(:func:`compile_supplementary`) and read from it on first use (:class:`Supplementary`), so
that a name the descriptors and genes answer costs no load of them.

What is kept is what grounding and filters need: each SCR's id, its name (what an edge
carries), its headings (it lives under them, and their tree places give its type: a chemical
under D, a disease under C), and the keys of its name and entry terms (:func:`term_key`, the
descriptors' keys). Left out: SCRs with no heading among the bundled descriptors (no type, no
place to file them), and those filed only under Proteins, which this project reads as genes
(HGNC).

The keys are one sorted array of 64-bit numbers, each a key's 45-bit hash, its SCR's row (18
bits) and its kind (0 the SCR's own name, 1 an entry term), in a file of its own that a lookup
maps instead of reading (:data:`KEYS_FILE`): a lookup costs no load, and the rest (names,
headings) is read when a lookup first finds an SCR. A name that is no key meets another's hash
about once in 2**45 / 500,000 lookups; one found as an SCR's own name is checked against it.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from fastbmrag.vocab.rules.keys import term_key

PROTEINS = "D011506"  # MeSH's Proteins: an SCR filed only below it is a protein, a gene here
KEYS_FILE = "supplementary.keys"  # the packed keys, raw little-endian uint64, sorted
HASH_BITS, ROW_BITS = 45, 18  # + 1 bit of kind: 64


def key_hash(key: str) -> int:
    """A term key's 45-bit hash (BLAKE2b)."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - HASH_BITS)


def compile_supplementary(
    records: dict[str, tuple[str, list[str], list[str]]],
    descriptors: Sequence[Sequence[str]],
    ancestors: dict[int, list[str]],
) -> dict[str, Any]:
    """The table of :class:`Supplementary` from ``{C id: (name, heading ids, entry terms)}``;
    ``descriptors`` and ``ancestors`` are the compiled MeSH table's (rows ``[ui, name, cats]``,
    ancestor ids by row). Its ``keys`` go to :data:`KEYS_FILE`, its ``under`` (how many SCRs
    each descriptor covers, by row) to the MeSH table, which every filter reads."""
    row_of = {d[0]: i for i, d in enumerate(descriptors)}

    def protein(h: int) -> bool:
        return descriptors[h][0] == PROTEINS or PROTEINS in ancestors.get(h, ())

    ids: list[str] = []
    names: list[str] = []
    heads: list[list[int]] = []
    hashes: list[int] = []
    codes: list[int] = []
    for scr, (name, headings, entries) in sorted(records.items()):
        rows = [row_of[h] for h in headings if h in row_of and descriptors[row_of[h]][2]]
        if not rows or all(protein(h) for h in rows):
            continue
        n = len(ids)
        ids.append(scr)
        names.append(name)
        heads.append(rows)
        own = term_key(name)
        for key, kind in [(own, 0), *((term_key(e), 1) for e in entries)]:
            if key and (kind == 0 or key != own):
                hashes.append(key_hash(key))
                codes.append(n * 2 + kind)
    if len(ids) >= 1 << ROW_BITS:
        raise ValueError(f"{len(ids):,} supplementary concepts do not fit {ROW_BITS} bits")
    packed = np.sort(np.array([(h << (ROW_BITS + 1)) | c for h, c in zip(hashes, codes,
                                                                        strict=True)],
                              dtype=np.uint64))  # fmt: skip
    under = np.zeros(len(descriptors), dtype=np.int32)  # how many SCRs each descriptor covers
    for rows in heads:
        for d in {a for h in rows for a in (descriptors[h][0], *ancestors.get(h, ()))}:
            if d in row_of:
                under[row_of[d]] += 1
    return {
        "keys": packed.astype("<u8").tobytes(),
        "ids": "\n".join(ids),
        "names": "\n".join(names),
        "heads": np.array([h for rows in heads for h in rows], dtype=np.int32).tobytes(),
        "ends": np.cumsum([len(r) for r in heads], dtype=np.int64).astype(np.int32).tobytes(),
        "under": under.tobytes(),
    }


class _Column(Sequence[str]):
    """One field of the SCRs' rows, as a sequence."""

    def __init__(self, rows: Sequence[Sequence[Any]], field: int) -> None:
        self._rows, self._field = rows, field

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [r[self._field] for r in self._rows[i]]
        return self._rows[i][self._field]

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[str]:
        return (r[self._field] for r in self._rows)


def supplementary_rows(data: dict[str, Any]) -> list[tuple[str, str, tuple[int, ...]]]:
    """The SCRs of a compiled table (:func:`compile_supplementary`) as rows ``(id, name,
    heading rows)``."""
    ids = data["ids"].split("\n") if data["ids"] else []
    names = data["names"].split("\n") if data["names"] else []
    heads = np.frombuffer(data["heads"], dtype=np.int32).tolist()
    ends = np.frombuffer(data["ends"], dtype=np.int32).tolist()
    starts = [0, *ends[:-1]]
    return [(i, n, tuple(heads[a:b])) for i, n, a, b in zip(ids, names, starts, ends,
                                                             strict=True)]  # fmt: skip


class Supplementary:
    """The supplementary concepts: ``keys`` (the packed array, mapped) looked up at no load;
    the rest read when first needed: ``rows`` and ``index`` (rows ``(id, name, heading rows)``
    and the row of each id, opened where the tables are: :mod:`fastbmrag.vocab.disk`), else
    ``data``, a callable that reads the compiled table whole."""

    def __init__(
        self,
        keys: np.ndarray,
        data: Any,
        descriptors: Sequence[Sequence[str]],
        rows: Sequence[Sequence[Any]] | None = None,
        index: Mapping[str, int] | None = None,
    ):
        self.keys = np.asarray(keys).view(np.ndarray)  # a mapped file, searched as an array
        self._read = data
        self.descriptors = descriptors
        if rows is not None and index is not None:
            self.__dict__["_table"] = (rows, index)

    @classmethod
    def empty(cls, descriptors: Sequence[Sequence[str]]) -> Supplementary:
        return cls(np.zeros(0, dtype=np.uint64), None, descriptors, [], {})

    @functools.cached_property
    def _table(self) -> tuple[Sequence[Sequence[Any]], Mapping[str, int]]:
        rows = supplementary_rows(self._read())
        return rows, {r[0]: i for i, r in enumerate(rows)}

    @property
    def names(self) -> Sequence[str]:
        return _Column(self._table[0], 1)

    @property
    def ids(self) -> Sequence[str]:
        return _Column(self._table[0], 0)

    def __len__(self) -> int:
        return len(self._table[0])

    def codes_of(self, key: str) -> list[int]:
        """The codes (row * 2 + kind) of the SCRs one of whose terms has ``key``; one found as
        an SCR's own name only where that name has the key."""
        if not len(self.keys):
            return []
        shift = ROW_BITS + 1
        h = key_hash(key)
        lo, hi = (int(i) for i in self.keys.searchsorted(
            np.array([h << shift, (h + 1) << shift], dtype=np.uint64)))  # fmt: skip
        if lo == hi:
            return []
        codes = [int(k) & ((1 << shift) - 1) for k in self.keys[lo:hi]]
        return [c for c in codes if c % 2 or term_key(self.names[c // 2]) == key]

    def id_of(self, row: int) -> str:
        return str(self._table[0][row][0])

    def headings(self, row: int) -> list[int]:
        """The descriptor rows ``row`` is filed under."""
        return [int(h) for h in self._table[0][row][2]]

    def categories(self, row: int) -> str:
        """The letters of its headings' trees: C disease, F mental disorder, D chemical."""
        return "".join(dict.fromkeys(c for h in self.headings(row) for c in self.descriptors[h][2]))

    def row(self, row: int) -> tuple[str, str, str]:
        """``[id, name, categories]``, as a descriptor's row."""
        return self.id_of(row), self.names[row], self.categories(row)

    def find(self, ontology_id: str) -> int | None:
        """The row of a C id, None for one not bundled."""
        return self._table[1].get(ontology_id) if ontology_id[:1] == "C" else None

    def heading_ids(self, row: int) -> list[str]:
        return [str(self.descriptors[h][0]) for h in self.headings(row)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)


def read_records(rows: Iterable[Sequence[str]]) -> dict[str, tuple[str, list[str], list[str]]]:
    """``{C id: (name, heading ids, entry terms)}`` from TSV rows ``scr_id, scr_name,
    heading_descriptor_ids, entry_terms[, ...]`` (``|``-joined lists)."""
    out: dict[str, tuple[str, list[str], list[str]]] = {}
    for row in rows:
        if len(row) < 4 or not row[0].startswith("C"):
            continue
        out[row[0]] = (row[1], [h for h in row[2].split("|") if h],
                       [e for e in row[3].split("|") if e])  # fmt: skip
    return out
