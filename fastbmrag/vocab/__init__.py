"""HGNC and MeSH vocabularies and the dictionary normaliser."""

from fastbmrag.vocab.base import IdentityNormalizer, Normalized, Normalizer
from fastbmrag.vocab.normalizer import (
    DictionaryNormalizer,
    find_abbreviations,
    load_normalizer,
    vocab_info,
)

__all__ = [
    "DictionaryNormalizer",
    "IdentityNormalizer",
    "Normalized",
    "Normalizer",
    "find_abbreviations",
    "load_normalizer",
    "vocab_info",
]
