"""Files that appear complete or not at all."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# The name ``replacing`` gives the file it writes first: ".NAME.HEX.part".
PART_FILE = re.compile(r"^\.(.+)\.[0-9a-f]+\.part$")


def written_for(path: Path) -> Path:
    """The file a temporary one of :func:`replacing` stands for (errors name that one)."""
    m = PART_FILE.match(path.name)
    return path.with_name(m.group(1)) if m else path


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A path to write in place of ``path`` (beside it, ``.NAME.HEX.part``): renamed to ``path``
    when the block ends, removed if it raises, so that a failed or interrupted write leaves
    whatever ``path`` held before. A path that is no regular file (a device such as /dev/null,
    a pipe) is written itself: a rename would put a file in its place. An error of the writes
    (a full disk) names ``path``."""
    direct = path.exists() and not path.is_file()
    tmp = path if direct else path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.part")
    try:
        yield tmp
        if not direct:
            os.replace(tmp, path)
    except BaseException as err:
        if not direct:
            tmp.unlink(missing_ok=True)
        if isinstance(err, OSError) and err.filename is None:
            err.filename = str(path)
        raise
