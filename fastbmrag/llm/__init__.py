"""LLM layer: one small interface, two backends (Ollama, OpenAI-compatible)."""

from fastbmrag.llm.base import Accounting, ChatResult, LLMClient, Usage

__all__ = ["Accounting", "ChatResult", "LLMClient", "Usage"]
