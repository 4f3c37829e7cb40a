"""The page-cache reader behind `fastbmrag query`'s readahead reads whole files, in a process
of its own (the engine's open holds the GIL, which stalled a reader thread)."""

from __future__ import annotations

import ctypes
import mmap
import os
from pathlib import Path

import pytest

from fastbmrag.store import pagecache

# larger than any device readahead window (Linux caps one posix_fadvise(WILLNEED) call at it:
# 8 MB on the benchmark machine), so that reading only the first window fails the test
SIZE = 32 << 20

pytestmark = pytest.mark.skipif(
    not hasattr(os, "posix_fadvise") or not hasattr(os, "sendfile"),
    reason="needs posix_fadvise (to empty the page cache) and sendfile",
)


def resident_pages(path: Path) -> tuple[int, int]:
    """(pages of ``path`` in the page cache, pages in all), from mincore(2)."""
    libc = ctypes.CDLL(None, use_errno=True)
    size = path.stat().st_size
    pages = -(-size // mmap.PAGESIZE)
    vec = (ctypes.c_ubyte * pages)()
    with path.open("rb") as f, mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY) as m:
        buf = (ctypes.c_char * size).from_buffer(m)
        try:
            rc = libc.mincore(ctypes.c_void_p(ctypes.addressof(buf)), ctypes.c_size_t(size), vec)
        finally:
            del buf
    if rc != 0:
        pytest.skip(f"mincore failed: {os.strerror(ctypes.get_errno())}")
    return sum(v & 1 for v in vec), pages


def evicted_file(path: Path) -> Path:
    path.write_bytes(os.urandom(SIZE))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    resident, pages = resident_pages(path)
    if resident > pages // 10:
        pytest.skip("this file system keeps files in memory (tmpfs?): nothing to read ahead")
    return path


def test_a_reader_process_reads_whole_files_into_the_page_cache(tmp_path: Path) -> None:
    big = evicted_file(tmp_path / "matrix.dat")
    reader = pagecache.start([str(tmp_path / "gone"), str(big)])  # a missing file is skipped
    assert reader is not None
    assert reader.wait(timeout=60) == 0
    resident, pages = resident_pages(big)
    assert resident == pages


def test_nothing_to_read_starts_nothing() -> None:
    assert pagecache.start([]) is None
