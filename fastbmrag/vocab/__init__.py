"""HGNC and MeSH vocabularies and the dictionary normaliser."""

from fastbmrag.vocab.base import IdentityNormalizer, Normalized, Normalizer
from fastbmrag.vocab.context import find_abbreviations
from fastbmrag.vocab.loading import load_normalizer, vocab_info
from fastbmrag.vocab.normalizer import DictionaryNormalizer

__all__ = [
    "DictionaryNormalizer",
    "IdentityNormalizer",
    "Normalized",
    "Normalizer",
    "find_abbreviations",
    "load_normalizer",
    "vocab_info",
]
