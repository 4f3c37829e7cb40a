"""Vocabulary tables opened, not loaded: the large tables of HGNC and MeSH in one SQLite file,
each row read where it is looked up (:class:`DiskMap`, :class:`DiskRows`).

A question looks up a few dozen names: it reads those rows and pays nothing for the hundreds of
thousands of others, and the process's memory does not grow with the vocabulary. The small
tables (a few thousand rows each, read by nearly every name) are one pickled blob read at open.
The file is written by the build (:func:`write_tables`) from the same tables it used to pickle,
so every lookup answers as before: the same keys, the same values (``marshal`` keeps tuples,
lists, ints and strings as they were). What was built by iterating a whole table (the ids'
rows, the labels, the spelling index, the longest key) is built by the build and stored.
"""

from __future__ import annotations

import marshal
import pickle
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

TABLES_FILE = "vocab.sqlite"
MAP_BYTES = 1 << 28  # more than the file: every page can be mapped

# The tables read row by row: a part's name -> its large tables (maps and row lists)
ON_DISK = {
    "genes": ("genes", "index", "entrez", "groups", "stem_groups"),
    "mesh": ("descriptors", "index", "bag", "superset", "ancestors"),
    # MeSH's supplementary concepts: rows (id, name, heading rows), and the row of each id
    "supplementary": ("rows", "index"),
}
# Indexes of the loaded tables that lookups by id read (:class:`~fastbmrag.vocab.facts.Facts`),
# computed by the build instead of on first use
DERIVED = ("_ids", "_labels", "_covered", "_members", "_spellings")


def _table(part: str, name: str) -> str:
    return f"{part}_{name.lstrip('_')}"


def write_tables(
    path: Path, parts: dict[str, dict[str, Any]], derived: dict[str, Mapping[Any, Any]]
) -> None:
    """Write ``parts`` ({"genes": ..., "mesh": ...}, the tables as the loader reads them) and
    the ``derived`` indexes into a new SQLite file at ``path`` (replaced atomically)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    try:
        con.execute("CREATE TABLE small (part TEXT PRIMARY KEY, data BLOB NOT NULL)")
        for part, data in parts.items():
            big = ON_DISK.get(part, ())
            small = {k: v for k, v in data.items() if k not in big}
            con.execute("INSERT INTO small VALUES (?, ?)", (part, pickle.dumps(small, 4)))
            for name in big:
                _write(con, _table(part, name), data[name])
        for name, index in derived.items():
            _write(con, _table("derived", name), index)
        con.commit()
        con.execute("VACUUM")
    finally:
        con.close()
    tmp.replace(path)


def _write(con: sqlite3.Connection, table: str, data: Any) -> None:
    if isinstance(data, Mapping):  # by key (iterated in the keys' order, not the build's)
        con.execute(f"CREATE TABLE {table} (k PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?)",
                        ((k, marshal.dumps(v)) for k, v in data.items()))  # fmt: skip
    else:
        con.execute(f"CREATE TABLE {table} (i INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?)",
                        ((i, marshal.dumps(v)) for i, v in enumerate(data)))  # fmt: skip


# Rows each opened table keeps once read (names repeat within a batch and across questions):
# past this many, it starts again, so that memory stays bounded whatever a process reads
MEMO_ROWS = 1 << 17
_ABSENT = object()


class DiskMap(Mapping[Any, Any]):
    """A read-only mapping whose rows stay in the file until looked up (each kept once read,
    :data:`MEMO_ROWS`)."""

    __slots__ = ("_con", "_get", "_len", "_memo", "_table")

    def __init__(self, con: sqlite3.Connection, table: str) -> None:
        self._con, self._table = con, table
        self._get = f"SELECT v FROM {table} WHERE k = ?"
        self._len: int | None = None
        self._memo: dict[Any, Any] = {}

    def _read(self, key: Any) -> Any:
        value = self._memo.get(key, _ABSENT)
        if value is _ABSENT:
            row = self._con.execute(self._get, (key,)).fetchone()
            value = None if row is None else marshal.loads(row[0])
            if len(self._memo) >= MEMO_ROWS:
                self._memo.clear()
            self._memo[key] = value
        return value

    def __getitem__(self, key: Any) -> Any:
        value = self._read(key) if isinstance(key, str | int) else None
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        value = self._read(key) if isinstance(key, str | int) else None
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str | int) and self._read(key) is not None

    def _all(self, what: str) -> sqlite3.Cursor:
        return self._con.execute(f"SELECT {what} FROM {self._table} ORDER BY k")

    def __iter__(self) -> Iterator[Any]:
        return (k for (k,) in self._all("k"))

    def items(self) -> Any:
        return ((k, marshal.loads(v)) for k, v in self._all("k, v"))

    def values(self) -> Any:
        return (marshal.loads(v) for (v,) in self._all("v"))

    def __len__(self) -> int:
        if self._len is None:
            self._len = int(self._con.execute(f"SELECT COUNT(*) FROM {self._table}").fetchone()[0])
        return self._len


class DiskRows(Sequence[Any]):
    """A read-only list of rows that stay in the file until read by position (each kept once
    read, :data:`MEMO_ROWS`)."""

    __slots__ = ("_con", "_get", "_len", "_memo", "_table")

    def __init__(self, con: sqlite3.Connection, table: str) -> None:
        self._con, self._table = con, table
        self._get = f"SELECT v FROM {table} WHERE i = ?"
        self._len = int(con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        self._memo: dict[int, Any] = {}

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        value = self._memo.get(i, _ABSENT)
        if value is _ABSENT:
            row = self._con.execute(self._get, (i,)).fetchone() if 0 <= i < self._len else None
            if row is None:
                raise IndexError(i)
            value = marshal.loads(row[0])
            if len(self._memo) >= MEMO_ROWS:
                self._memo.clear()
            self._memo[i] = value
        return value

    def __iter__(self) -> Iterator[Any]:
        cursor = self._con.execute(f"SELECT v FROM {self._table} ORDER BY i")
        return (marshal.loads(v) for (v,) in cursor)

    def __len__(self) -> int:
        return self._len


def open_tables(path: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The parts of the SQLite file at ``path`` (small tables loaded, large ones opened) and
    its derived indexes, opened."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    # pages read through a mapping of the file, not a read() each: a third off a lookup
    con.execute(f"PRAGMA mmap_size = {MAP_BYTES}")
    parts: dict[str, dict[str, Any]] = {}
    for part, blob in con.execute("SELECT part, data FROM small"):
        data = pickle.loads(blob)  # noqa: S301 - written by the build into the package or the user's own cache
        for name in ON_DISK.get(part, ()):
            table = _table(part, name)
            rows = con.execute(f"SELECT sql FROM sqlite_master WHERE name = '{table}'").fetchone()
            is_rows = rows is not None and "INTEGER PRIMARY KEY" in rows[0]
            data[name] = DiskRows(con, table) if is_rows else DiskMap(con, table)
        parts[part] = data
    derived = {name: DiskMap(con, _table("derived", name)) for name in DERIVED}
    return parts, derived
