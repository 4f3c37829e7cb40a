"""Where the vocabularies live and loading them once per process."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fastbmrag import config
from fastbmrag.errors import VocabError
from fastbmrag.vocab.layout import MANIFEST
from fastbmrag.vocab.normalizer import DictionaryNormalizer

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "data" / "vocab"
CACHE_SUBDIR = "vocab"


# --------------------------------------------------------------------------------------------
# Loading (memoised per process)
# --------------------------------------------------------------------------------------------

# directory -> (manifest mtime, its normaliser): one normaliser per directory, the newest build
_MEMO: dict[str, tuple[int, DictionaryNormalizer]] = {}
_MEMO_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Where `fastbmrag vocab update` writes rebuilt vocabularies: ``<FASTBMRAG_HOME>/vocab``."""
    return config.home() / CACHE_SUBDIR


def vocab_dir(path: Path | None = None) -> tuple[Path, str]:
    """The directory to load and where it comes from: "custom", "cache" or "bundled"."""
    if path is not None:
        return Path(path).expanduser(), "custom"
    cached = cache_dir()
    if (cached / MANIFEST).is_file():
        return cached, "cache"
    return BUNDLED_DIR, "bundled"


def load_normalizer(path: Path | None = None) -> DictionaryNormalizer:
    """The normaliser over ``path``, else the user's rebuilt cache, else the bundled files.

    Loaded once per process and directory; reloaded when the directory is rebuilt, and the
    previous build's normaliser is then dropped (freed once its callers let go of it).
    """
    directory, _origin = vocab_dir(path)
    try:
        stamp = (directory / MANIFEST).stat().st_mtime_ns
    except OSError as err:
        raise VocabError(
            f"No vocabularies in {directory} (missing {MANIFEST}); "
            "run `fastbmrag vocab update` or reinstall fastbmrag."
        ) from err
    key = str(directory.resolve())
    with _MEMO_LOCK:
        held = _MEMO.get(key)
        if held is not None and held[0] == stamp:
            return held[1]
        norm = DictionaryNormalizer.from_dir(directory)
        _MEMO[key] = (stamp, norm)
    return norm


def vocab_info(path: Path | None = None) -> dict[str, Any]:
    """Versions, sources and counts of the vocabularies :func:`load_normalizer` would load."""
    directory, origin = vocab_dir(path)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise VocabError(
            f"Cannot read {directory / MANIFEST} ({err}); run `fastbmrag vocab update` "
            "or reinstall fastbmrag."
        ) from err
    return {"path": str(directory), "origin": origin, **manifest}
