"""Read files into the OS page cache from a separate process, without waiting for it.

`fastbmrag query` starts this on the files an open of its embedded shard reads, before its own
imports: the disk then works while Python imports modules and loads the vocabularies.
`RAG.query` starts it right before its open.

Why a process: a reader thread needs the GIL between two system calls, and the engine's open
holds it throughout (0.3-0.4 s at 200k edges), so a thread stood still exactly when the open
needed the files. Why ``sendfile`` to /dev/null: it reads a whole file in one system call and
copies nothing, where ``posix_fadvise(WILLNEED)`` reads at most the device's readahead window
per call (8 MB on the benchmark machine: one call on the 80 MB HNSW graph of a 200k-edge shard
read a tenth of it) and ``read`` copies every byte.

This file runs as a script in the reader process (``python -I -S pagecache.py FILE...``): it
imports nothing but ``os`` and ``sys`` at module level, so that process starts in ~10 ms.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Sequence
from typing import Any

# the largest count Linux moves in one sendfile call
_MAX_SEND = 0x7FFFF000


def read_into_cache(names: Sequence[str]) -> None:
    """Read each file in ``names`` through the page cache, copying nothing. A file that is gone
    (replaced by a writer's optimise meanwhile) or cannot be sent is skipped."""
    sink = os.open(os.devnull, os.O_WRONLY)
    try:
        for name in names:
            try:
                fd = os.open(name, os.O_RDONLY)
            except OSError:
                continue
            try:
                offset, size = 0, os.fstat(fd).st_size
                while offset < size:
                    sent = os.sendfile(sink, fd, offset, min(size - offset, _MAX_SEND))
                    if sent <= 0:
                        break
                    offset += sent
            except OSError:
                pass
            finally:
                os.close(fd)
    finally:
        os.close(sink)


def start(names: Sequence[str]) -> Any:
    """Start a process that reads ``names`` into the page cache (:func:`read_into_cache`) and
    return its ``subprocess.Popen``; None where there is nothing to read, the platform has no
    ``sendfile``, or the process cannot start (a readahead is a hint: nothing depends on it)."""
    if not names or not hasattr(os, "sendfile"):
        return None
    import subprocess

    _reap()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), *names],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None
    _running.append(proc)
    return proc


# readers started by this process and not yet waited for (a long-lived process, such as one
# that calls RAG.query per question, reaps them on its next start)
_running: list[Any] = []


def _reap() -> None:
    _running[:] = [p for p in _running if p.poll() is None]


def _stop_all() -> None:
    """At exit: a reader still running has nothing left to speed up; stop it rather than leave
    it behind."""
    for proc in _running:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _running.clear()


atexit.register(_stop_all)


if __name__ == "__main__":
    read_into_cache(sys.argv[1:])
