"""Opening a collection: the one opener behind ``Collection.reader``, ``writer`` and
``ledger_only`` (name check, locks, ledger, store, finishing what a killed writer left), and the
check that the store still holds the edges the ledger lists."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from fastbmrag.errors import CollectionNotFound, LockedError, StoreBusy, StoreLost
from fastbmrag.store.base import Store
from fastbmrag.store.ledger import Ledger
from fastbmrag.store.places import (
    LEDGER_FILE,
    LOCK_FILE,
    READ_FREE,
    SHARD_DIR,
    SHARD_LOCK_FILE,
    WRITE_FREE,
    WRITER_WAITING_FILE,
    FileLock,
    allocates_on_read,
    check_name,
    check_space,
    command_line,
    holder_line,
    list_collections,
    stamp,
)
from fastbmrag.util.wording import counted, option_named

log = logging.getLogger(__name__)

# How long a reader waits for another *reader* (a query) to let go of the embedded shard.
DEFAULT_BUSY_TIMEOUT = 10.0


class Opened(Protocol):
    """What opening needs of the collection it makes (:class:`~fastbmrag.store.Collection`)."""

    name: str
    directory: Path
    ledger: Ledger
    backend: str

    @property
    def location(self) -> str: ...

    @property
    def has_store(self) -> bool: ...

    @property
    def store(self) -> Store: ...

    def recover(self) -> dict[str, int]: ...

    def upgrade(self) -> int: ...

    def close(self) -> None: ...


C = TypeVar("C", bound=Opened)


def open_collection(
    make: Callable[..., C],
    working_dir: Path,
    name: str,
    *,
    qdrant_url: str | None = None,
    api_key: str | None = None,
    write: bool = False,
    create: bool = False,
    ledger_only: bool = False,
    store: Store | None = None,
    command: str | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    repair: bool = False,
) -> C:
    """Open (or with ``create``, create) collection ``name`` under ``working_dir``, made by
    ``make(name, directory, ledger, store, backend=, writable=, locks=, location=)``: the one
    opener behind ``Collection.reader``, ``writer`` and ``ledger_only``. ``store`` injects a
    ready store (tests, custom backends) instead of the embedded shard or ``qdrant_url``.
    A store that lost edges the ledger lists is StoreLost, unless a writer opens it with
    ``repair`` (:func:`check_intact`).
    """
    check_name(name)
    working_dir = Path(working_dir).expanduser()
    directory = working_dir / name
    if not create and not (directory / LEDGER_FILE).is_file():
        existing = list_collections(working_dir)
        known = ", ".join(existing) if existing else "none yet"
        raise CollectionNotFound(
            f"No collection '{name}' in {working_dir} (collections there: {known}): "
            f"check {option_named('collection')} and {option_named('working_dir')}, or index papers into it"
        )
    if store is None and not qdrant_url and not ledger_only:  # the embedded shard: mapped files
        from fastbmrag.store.edge import unallocated

        holes = unallocated(directory / SHARD_DIR) if allocates_on_read(directory) else 0
        check_space(directory, (WRITE_FREE if write else READ_FREE) + holes,
                    f"opening collection '{name}' for {'writing' if write else 'reading'}")  # fmt: skip
    if create:
        directory.mkdir(parents=True, exist_ok=True)
    info = {
        "pid": os.getpid(),
        "command": command or command_line(),
        "started_at": stamp(),
    }
    locks: list[FileLock] = []
    ledger: Ledger | None = None
    opened: Store | None = None
    try:
        if write:
            lock = FileLock(directory / LOCK_FILE)
            if not lock.try_acquire(info):
                raise LockedError(
                    f"Collection '{name}' is being updated by {holder_line(lock.holder())}: "
                    "wait for it to finish"
                )
            locks.append(lock)
        ledger = Ledger(directory / LEDGER_FILE)
        if store is not None:
            backend = getattr(store, "backend", "custom")
        else:
            backend = "server" if qdrant_url else "embedded"
        if store is not None:
            opened = store
        elif ledger_only:
            opened = None
        elif qdrant_url:
            from fastbmrag.store.server import ServerStore

            opened = ServerStore.connect(qdrant_url, name, api_key=api_key)
        else:
            locks.append(
                take_shard(
                    directory,
                    name,
                    {**info, "mode": "write" if write else "read"},
                    busy_timeout,
                )
            )
            from fastbmrag.store.edge import EdgeStore

            opened = EdgeStore(directory / SHARD_DIR)
        coll = make(
            name,
            directory,
            ledger,
            opened,
            backend=backend,
            writable=write,
            locks=locks,
            location=(
                f"{qdrant_url.rstrip('/')}/collections/{name}"
                if qdrant_url and opened is None
                else None
            ),
        )
    except BaseException:
        if opened is not None and store is None:
            opened.close()
        if ledger is not None:
            ledger.close()
        for lock in reversed(locks):
            lock.release()
        raise
    try:
        if write and opened is not None:
            coll.recover()
            coll.upgrade()
        check_intact(coll, repair=repair and write)
    except BaseException:
        coll.close()
        raise
    return coll


def check_intact(coll: Opened, *, repair: bool = False) -> None:
    """StoreLost when the ledger lists edges that the store does not hold: the shard folder
    was deleted or damaged, the server collection dropped. With ``repair`` (a writer asked to
    re-index, ``update --force``), the papers whose edges are gone are set back to pending
    instead, so that the run indexes them again."""
    listed = coll.ledger.edge_count()
    if not listed or coll.ledger.journal():  # a half-done commit: recover() finishes it
        return
    if not coll.has_store:  # ledger only: an embedded shard must at least be there
        if coll.backend != "embedded" or (coll.directory / SHARD_DIR).is_dir():
            return
        held = 0
    else:
        held = coll.store.count()
    if held >= listed:
        return
    if not repair:
        raise StoreLost(
            f"Collection '{coll.name}' lists {counted(listed, 'edge')} but its store at "
            f"{coll.location} holds {held:,}: the store was deleted or damaged. Index the "
            f"papers again (an update with {option_named('force')}), or start "
            f"afresh by removing {coll.directory}"
        )
    present = coll.store.paper_ids() if held else set()
    lost = [p.paper_id for p in coll.ledger.papers("done") if p.paper_id not in present]
    coll.ledger.remove_papers(lost, keep_as_pending=True)
    log.warning(
        "Collection '%s': the edges of %d papers were missing from its store; they are "
        "indexed again when they are in the input",
        coll.name,
        len(lost),
    )


def take_shard(directory: Path, name: str, info: dict[str, Any], timeout: float) -> FileLock:
    """The shard's lock, waiting up to ``timeout`` seconds for a reader to let it go. A writer
    that waits says so (:data:`WRITER_WAITING_FILE`), and a reader does not take the shard
    before a waiting writer: readers keep arriving, the writer would never get it."""
    lock = FileLock(directory / SHARD_LOCK_FILE)
    deadline = time.monotonic() + timeout
    writing = info.get("mode") == "write"
    waiting = FileLock(directory / WRITER_WAITING_FILE)
    if not writing:
        check_no_writer_waits(directory, name)
    else:  # writers are one at a time (the collection's lock): a reader's look holds this a moment
        while not waiting.try_acquire(info) and time.monotonic() < deadline:
            time.sleep(0.01)
    try:
        while not lock.try_acquire(info):
            holder = lock.holder()
            if holder.get("mode") == "write" or time.monotonic() >= deadline:
                raise _busy(name, holder)
            time.sleep(0.1)
    finally:
        waiting.release()
    return lock


def check_no_writer_waits(directory: Path, name: str) -> None:
    """StoreBusy where a writer waits for the shard of collection ``name``: a reader arriving
    now would keep it waiting."""
    waiting = FileLock(directory / WRITER_WAITING_FILE)
    if directory.is_dir() and waiting.taken():
        raise _busy(name, {**waiting.holder(), "mode": "write"})


def _busy(name: str, holder: dict[str, Any]) -> StoreBusy:
    doing = "being updated" if holder.get("mode") == "write" else "open"
    busy = StoreBusy(
        f"Collection '{name}' is {doing} by {holder_line(holder)}, and its embedded store "
        "can be open in one process at a time: wait for it to finish, or run a "
        f"Qdrant server and use {option_named('qdrant_url')} / QDRANT_URL to query during updates"
    )
    busy.holder = holder_line(holder)
    return busy
