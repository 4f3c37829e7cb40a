"""Settings: flag > environment variable > default. Each default is named once, here."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_HOME = "~/.fastbmrag"
DEFAULT_OLLAMA_HOST = "http://localhost:11434"
DEFAULT_LLM_MODEL = "phi4"
DEFAULT_EMBED_MODEL = "mxbai-embed-large"
DEFAULT_CONCURRENCY = 4
DEFAULT_EMBED_BATCH = 64
DEFAULT_NUM_CTX = 8192

# Environment variables (the ecosystem's own where one exists).
ENV_HOME = "FASTBMRAG_HOME"
ENV_COLLECTION = "FASTBMRAG_COLLECTION"
ENV_LLM_MODEL = "FASTBMRAG_LLM_MODEL"
ENV_EMBED_MODEL = "FASTBMRAG_EMBED_MODEL"
ENV_ANSWER_MODEL = "FASTBMRAG_ANSWER_MODEL"
ENV_OLLAMA_HOST = "OLLAMA_HOST"
ENV_QDRANT_URL = "QDRANT_URL"
ENV_NUM_PREDICT = "FASTBMRAG_NUM_PREDICT"
ENV_QDRANT_API_KEY = "QDRANT_API_KEY"


def home() -> Path:
    """Where all state lives unless a command is given ``--working-dir``."""
    return Path(os.environ.get(ENV_HOME) or DEFAULT_HOME).expanduser()


def working_dir(value: str | os.PathLike[str] | None = None) -> Path:
    return Path(value).expanduser() if value else home()


def ollama_host(value: str | None = None) -> str:
    host = value or os.environ.get(ENV_OLLAMA_HOST) or DEFAULT_OLLAMA_HOST
    if "://" not in host:  # OLLAMA_HOST is often given as host:port
        host = "http://" + host
    return host.rstrip("/")


def llm_model(value: str | None = None) -> str:
    return value or os.environ.get(ENV_LLM_MODEL) or DEFAULT_LLM_MODEL


def embed_model(value: str | None = None) -> str:
    return value or os.environ.get(ENV_EMBED_MODEL) or DEFAULT_EMBED_MODEL


def qdrant_url(value: str | None = None) -> str | None:
    return value or os.environ.get(ENV_QDRANT_URL) or None


def qdrant_api_key(value: str | None = None) -> str | None:
    return value or os.environ.get(ENV_QDRANT_API_KEY) or None
