"""HGNC and MeSH vocabularies and the dictionary normaliser."""

from fastbmrag.vocab.base import IdentityNormalizer, Normalized, Normalizer

__all__ = ["IdentityNormalizer", "Normalized", "Normalizer"]
