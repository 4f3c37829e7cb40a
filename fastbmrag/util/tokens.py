"""Token counts with a real BPE tokenizer, never characters / 4.

``cl100k_base`` (the ``bpe-openai`` package ships its vocabulary, so nothing is downloaded) is
of the family of the tokenizers of the models this project runs (phi-4's is an extension of it);
a model's own tokenizer differs by a few per cent on English and biomedical text, where
characters / 4 is off by a factor of two on compact JSON. Used where a server reports no counts,
by the prompt-size warning, by the fake model server and by the benchmark scripts.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

TOKENIZER = "cl100k_base"


@functools.cache
def _encoding() -> Any:
    with warnings.catch_warnings():  # it reads its tables with a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # about 0.4 s to load its tables: only when a count is needed

        return bpe_openai.get_encoding(TOKENIZER)


def count_tokens(text: str) -> int:
    """The number of ``cl100k_base`` tokens of ``text`` (special-token text counts as text)."""
    return len(_encoding().encode_ordinary(text)) if text else 0
