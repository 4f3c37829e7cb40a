"""The one way the project's resources close: ``with Thing(...) as thing:`` calls ``close()``
on the way out, whatever happened inside."""

from __future__ import annotations

from typing import Self


class Closing:
    """Base of a resource that holds something to let go of (a file, a lock, a connection)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
