"""Test doubles that are real servers, shipped in the package so tests and benchmarks share them."""

from fastbmrag.testing.answers import hashed_embedding, schema_instance
from fastbmrag.testing.fake_ollama import FakeOllama, Record

__all__ = ["FakeOllama", "Record", "hashed_embedding", "schema_instance"]
