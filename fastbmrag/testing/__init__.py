"""Test doubles that are real servers, shipped in the package so tests and benchmarks share them."""

from fastbmrag.testing.fake_ollama import FakeOllama, Record, hashed_embedding, schema_instance

__all__ = ["FakeOllama", "Record", "hashed_embedding", "schema_instance"]
