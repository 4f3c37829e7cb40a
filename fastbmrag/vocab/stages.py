"""What the normaliser's stage classes share: the vocabulary tables
:class:`~fastbmrag.vocab.normalizer.DictionaryNormalizer` loads and the lookups it defines,
declared once for :mod:`~fastbmrag.vocab.genes`, :mod:`~fastbmrag.vocab.fallback`,
:mod:`~fastbmrag.vocab.abbreviations`, :mod:`~fastbmrag.vocab.mentions` and
:mod:`~fastbmrag.vocab.facts`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fastbmrag.vocab.base import Normalized
from fastbmrag.vocab.candidates import Spellings, WordWeights
from fastbmrag.vocab.context import Context, Hit


class Stages:
    """The tables (set by ``DictionaryNormalizer.__init__``, see there) and the lookups every
    stage may call."""

    # HGNC
    _genes: list[list[str]]
    _gene_index: dict[str, int | Sequence[int]]
    _gene_multi: Sequence[Sequence[int]]
    _gene_groups: dict[int, list[str]]
    _group_names: dict[str, str]
    _group_keys: dict[str, str]
    _stem_groups: dict[str, str]
    # MeSH
    _desc: list[list[str]]
    _mesh_index: dict[str, int | Sequence[int]]
    _mesh_bag: dict[str, int | Sequence[int]]
    _mesh_multi: Sequence[Sequence[int]]
    _mesh_ancestors: dict[int, list[str]]
    _bag_words: frozenset[str]
    _completions: dict[str, int]
    _bag_completions: dict[str, int]
    _mesh_extend: dict[str, int | Sequence[int]]
    _mesh_head: dict[str, int]
    _head_partners: dict[str, list[list[Any]]]
    _superset: dict[str, int | Sequence[int]]
    _processes: frozenset[int]
    _drug_induced: dict[str, int]
    _induced_child: dict[int, int]
    # built as names need them
    _site_heads: dict[str, bool]
    _word_weights: WordWeights | None
    _word_weight_table: dict[str, Any] | None
    _spellings: Spellings
    _labels: dict[str, str] | None
    _ids: dict[str, int] | None
    _covered: dict[str, int] | None

    if TYPE_CHECKING:  # defined by DictionaryNormalizer and the stage classes

        def _normalize(self, name: str, type_hint: str, ctx: Context | None) -> Normalized: ...

        def _direct(self, clean: str, t: str, ctx: Context | None) -> Hit | None: ...

        def _fallback(self, clean: str, t: str, ctx: Context | None) -> Hit | None: ...

        def _tried(
            self, t: str, stage: str, hit: Hit | None, none: str = "nothing"
        ) -> Hit | None: ...

        def _spelling(self, clean: str, t: str) -> Hit | None: ...

        def _mesh_tokens(self, toks: Sequence[str], t: str, ctx: Context | None) -> Hit | None: ...

        def _expanded(self, clean: str, t: str, ctx: Context) -> Hit | None: ...

        def _context(self, text: str) -> Context: ...

        def _result(self, name: str, type_: str, hit: Hit) -> Normalized: ...

        def _gene_codes(
            self, codes: int | Sequence[int] | None, ctx: Context | None
        ) -> Hit | None: ...

        def _mesh_codes(
            self,
            codes: int | Sequence[int] | None,
            t: str,
            ctx: Context | None,
            fixed: float,
            exact_key: str = "",
        ) -> Hit | None: ...

        def _pick_descriptor(self, items: Sequence[int], ctx: Context) -> int | None: ...

        @property
        def word_weights(self) -> WordWeights: ...
