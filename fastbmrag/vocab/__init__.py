"""HGNC and MeSH vocabularies and the dictionary normaliser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastbmrag.vocab.base import IdentityNormalizer, Normalized, Normalizer
from fastbmrag.vocab.context import find_abbreviations
from fastbmrag.vocab.loading import cache_dir as vocab_cache_dir
from fastbmrag.vocab.loading import load_normalizer, vocab_info
from fastbmrag.vocab.normalizer import DictionaryNormalizer
from fastbmrag.vocab.rules.candidates import abstention


def update_vocab(out_dir: Path, **sources: Any) -> dict[str, Any]:
    """Rebuild the vocabularies into ``out_dir`` from local files or downloads
    (:func:`fastbmrag.vocab.building.download.update_vocab`); the manifest written."""
    from fastbmrag.vocab.building.download import update_vocab as update

    return update(out_dir, **sources)


__all__ = [
    "DictionaryNormalizer",
    "IdentityNormalizer",
    "Normalized",
    "Normalizer",
    "abstention",
    "find_abbreviations",
    "load_normalizer",
    "update_vocab",
    "vocab_cache_dir",
    "vocab_info",
]
