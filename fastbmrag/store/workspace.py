"""What an operation needs of the workspace it runs in (:class:`Workspace`, which
:class:`fastbmrag.RAG` is): the settings, the collection opened for reading, for writing or as
its ledger alone, the model-server client and the normaliser. The operations are typed against
it, so that they depend on what they use, not on the library object."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from fastbmrag.config import Settings
    from fastbmrag.llm import BaseLLM, ServerPool
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.base import Normalizer


class Workspace(Protocol):
    settings: Settings

    @property
    def working_dir(self) -> Path: ...

    @property
    def collection_name(self) -> str: ...

    def llm(self, *, cache: bool | None = None, query: bool = False) -> BaseLLM | ServerPool: ...

    def normalizer(self) -> Normalizer: ...

    def reader(
        self, *, command: str | None = None
    ) -> contextlib.AbstractContextManager[Collection]: ...

    def writer(
        self,
        *,
        create: bool = False,
        command: str | None = None,
        repair: bool = False,
        wait: float | None = None,
    ) -> Collection: ...

    def ledger(self) -> Collection: ...

    def reading(self) -> contextlib.AbstractContextManager[Collection]: ...

    def where(self) -> dict[str, Any]: ...

    def readahead(self) -> None: ...

    def update_running(self) -> str | None: ...
