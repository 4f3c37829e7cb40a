"""Where collections live and who holds them: a collection's files under the working
directory, its name, the one to use when none is named, the readahead of its embedded shard,
and the ``flock`` files that say which command holds it."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastbmrag.errors import CollectionNotFound, DiskFull, InputError
from fastbmrag.util.wording import option_named

MB = 1 << 20
# Free space the embedded store needs to be opened (it maps and may extend its files: on a full
# volume a write into a mapped file kills the process with SIGBUS), and to be written to (a new
# shard preallocates about 20 MB).
READ_FREE = 16 * MB
WRITE_FREE = 64 * MB

LEDGER_FILE = "ledger.sqlite"
SHARD_DIR = "shard"
LOCK_FILE = "lock"
SHARD_LOCK_FILE = "shard.lock"
# held by a writer while it waits for the shard: readers that arrive meanwhile do not take the
# shard before it (a page under load would otherwise keep an update out)
WRITER_WAITING_FILE = "shard.waiting"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def command_line() -> str:
    """The command that holds a lock, as the user typed it (long ones shortened)."""
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    line = " ".join([prog, *sys.argv[1:]])
    return line if len(line) <= 160 else line[:157] + "..."


def list_collections(working_dir: Path) -> list[str]:
    """Names of the collections under ``working_dir`` (folders holding a ledger)."""
    root = Path(working_dir)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / LEDGER_FILE).is_file())


def choose_collection(working_dir: Path, name: str | None, *, qdrant_url: str | None = None) -> str:
    """``name`` if given (flag or FASTBMRAG_COLLECTION), else the only collection there is."""
    if name:
        return name
    if qdrant_url:
        raise InputError(
            f"Name the collection to query on the Qdrant server: {option_named('collection')}"
        )
    names = list_collections(working_dir)
    if len(names) == 1:
        return names[0]
    if not names:
        raise CollectionNotFound(
            f"No collection in {working_dir}: index papers first (fastbmrag update -c NAME papers.csv) "
            f"or point {option_named('working_dir')} at the right directory"
        )
    raise InputError(
        f"Several collections in {working_dir} ({', '.join(sorted(names))}): choose one with "
        f"{option_named('collection')} or FASTBMRAG_COLLECTION"
    )


def readahead(working_dir: Path, name: str) -> None:
    """Have the OS start reading, in the background, the files that opening collection
    ``name``'s embedded shard reads (:func:`fastbmrag.store.edge.readahead`). A command calls
    it before its imports and vocabulary load, which then overlap the disk reads of the open.
    A hint only: nothing happens where the collection has no embedded shard."""
    from fastbmrag.store.edge import readahead as shard_readahead

    shard = Path(working_dir).expanduser() / name / SHARD_DIR
    if shard not in _READ_AHEAD:  # once per process: the command, then RAG, may both ask
        _READ_AHEAD.add(shard)
        shard_readahead(shard)


_READ_AHEAD: set[Path] = set()


# Folders of the working dir that are no collection's: the rebuilt vocabularies, the logs.
RESERVED_NAMES = frozenset({"vocab", "logs"})


def free_space(path: Path) -> tuple[Path, int | None]:
    """The folder ``path`` is, or the nearest one above it that exists, and the bytes free on
    its volume (None where it cannot tell)."""
    where = Path(path).expanduser()
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        st = os.statvfs(where)
    except OSError:
        return where, None
    return where, st.f_bavail * st.f_frsize


# Volumes that allocate a page for a read of a file's hole: memory-backed ones. There, the
# parts of the store's files not yet written (made at their full size) need room when an open
# reads them, or the reader dies of SIGBUS; a disk's file system reads a hole as zeros.
MEMORY_VOLUMES = frozenset({"tmpfs", "ramfs", "shmfs", "devtmpfs", "hugetlbfs"})


def allocates_on_read(path: Path) -> bool:
    """Whether the volume of ``path`` is memory-backed (:data:`MEMORY_VOLUMES`), by the longest
    mount point above it in /proc/mounts (False where there is no such table)."""
    where = os.path.realpath(free_space(path)[0])
    best, kind = "", ""
    try:
        with open("/proc/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) < 3:
                    continue
                point = fields[1].replace("\\040", " ")
                inside = where == point or where.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, fields[2]
    except OSError:
        return False
    return kind in MEMORY_VOLUMES


def check_space(path: Path, needed: int, doing: str) -> None:
    """DiskFull, one line naming the volume and what is needed, when the volume of ``path`` (or
    of the nearest folder above it that exists) has less than ``needed`` bytes free."""
    where, free = free_space(path)
    if free is not None and free < needed:
        raise DiskFull(
            f"The volume of {where} has {free / MB:,.0f} MB free and {doing} needs about "
            f"{needed / MB:,.0f} MB: free some space there (nothing committed is lost)"
        )


def check_name(name: str) -> str:
    if not name or not _NAME.match(name):
        raise InputError(
            f"Invalid collection name {name!r}: use letters, digits, '_', '-' or '.', "
            "starting with a letter or digit (e.g. "
            f"{option_named('collection')} endometriosis)"
        )
    if name.lower() in RESERVED_NAMES:
        raise InputError(
            f"The collection name {name!r} is taken by the working dir's own {name.lower()}/ "
            "folder: choose another (e.g. "
            f"{option_named('collection')} endometriosis)"
        )
    if re.search(r"\.sqlite(?:-wal|-shm|-journal)?$", name, re.I):
        raise InputError(
            f"The collection name {name!r} is a name the working dir's own databases take (its "
            "caches, llm_cache.sqlite and pubtator_cache.sqlite, and their -wal, -shm and "
            "-journal files): choose another (e.g. "
            f"{option_named('collection')} endometriosis)"
        )
    return name


class FileLock:
    """An exclusive ``flock`` on a file, holding who took it (pid, command, start time, mode).

    flock locks belong to the open file, so they die with the process that holds them: a lock
    file left behind by a killed process is simply taken over.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self, info: dict[str, Any]) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd
        return True

    def holder(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # releases the flock

    @property
    def held(self) -> bool:
        return self._fd is not None

    def taken(self) -> bool:
        """Whether a process (this one included, by another open) holds the lock now; nothing
        is written."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False


def holder_line(holder: dict[str, Any]) -> str:
    pid = holder.get("pid", "?")
    cmd = holder.get("command", "another command")
    started = holder.get("started_at", "an unknown time")
    return f"pid {pid} ({cmd}, started {started})"


def ensure_creatable(path: Path) -> None:
    """Raise the OSError that creating ``path`` would meet, leaving nothing behind: a probe
    folder is made and removed in its nearest existing ancestor (permission bits alone do not
    tell, for root or on a read-only mount)."""
    base = path
    while not base.exists() and base.parent != base:
        base = base.parent
    try:
        if not base.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
        os.rmdir(tempfile.mkdtemp(prefix=".fastbmrag-probe-", dir=base))
    except OSError as err:
        raise type(err)(err.errno, err.strerror, str(path)) from None
