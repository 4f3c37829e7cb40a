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
    whatever ``path`` held before."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.part")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
