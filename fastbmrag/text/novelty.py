"""A relation's probability of being background (the paper restates it as known), from a small
learned model over the text's cues (:mod:`fastbmrag.text.findings`, whose rules become its
inputs) and the paper's other relations.

:func:`features` turns a paper's sentences and relations into one row of named numbers per
relation (:data:`FEATURES`): the rules' verdict and the roles of the sentences that state the
relation, the cues in them (prior knowledge reported, another paper cited, the study's model,
the authors' earlier work, the paper's own work, a relation named inside a noun phrase), their
section labels, numbers, hedges and comparisons in them, where the pair is first stated and
where the paper first speaks of its own work, the title, how often each end is named and how
many relations it takes part in, the relation's order among the paper's, the ends' types.

The model (LightGBM's gradient-boosted trees, :data:`MODEL_FILE` in the package, with its
threshold and the features it was trained on in :data:`CARD_FILE`) is trained by
``scripts/train_findings.py`` on BioRED Train's even PMIDs and judged on its odd ones
(``scripts/bench_novelty.py``). It needs the ``lightgbm`` package (``pip install
"fastbmrag[findings]"``): without it, :func:`load_model` returns None and the rules decide.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastbmrag.text.findings import (
    BACKGROUND,
    CUES,
    FINDING,
    FROM_TEXT,
    named_as_known,
    relation_role,
    section_role,
    sentence_labels,
    sentence_roles,
)
from fastbmrag.text.sentences import ABSTRACT, TITLE, Sentence

DATA = Path(__file__).resolve().parents[1] / "data" / "findings"
MODEL_FILE = DATA / "model.txt"
CARD_FILE = DATA / "model.json"

# The entity types a relation's ends are counted by (the model's types; BioRED's map to them).
TYPES = ("gene", "disease", "chemical", "variant")
_NUMBER = re.compile(r"\d")
_STATISTIC = re.compile(r"\b[pP]\s*[<=>≤]\s*0?\.\d|\d\s*%|\b(?:OR|RR|HR|CI)\b|95\s*%")
_HEDGE = re.compile(r"\b(?:may|might|could|suggests?|suggesting|possibl[ey]|potential(?:ly)?|"
                    r"likely|propose[ds]?|hypothes[ie]s[ie]?[sd]?)\b", re.IGNORECASE)  # fmt: skip
# Words that say how a sentence presents what it states: the paper's own work ("we found",
# "here"), knowledge as prior ("known", "role", "implicated"), the study's subjects and its
# comparisons ("patients", "mice", "compared"), or news ("novel", "first").
CUE_WORDS = (
    "found", "showed", "demonstrated", "observed", "revealed", "identified", "detected",
    "investigated", "examined", "evaluated", "analyzed", "here", "present", "report", "known",
    "previously", "reported", "established", "recently", "studies", "evidence", "role",
    "important", "involved", "implicated", "associated", "characterized", "common", "cause",
    "mutations", "patients", "cases", "mice", "rats", "cells", "treatment", "group", "controls",
    "novel", "new", "first", "suggest", "indicate", "conclusion", "results",
)  # fmt: skip
_WORD = re.compile(r"[a-z]+")
_COMPARE = re.compile(r"\b(?:significant(?:ly)?|increased|decreased|higher|lower|reduced|"
                      r"elevated|compared|versus|vs)\b", re.IGNORECASE)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Pair:
    """One relation of a paper as the features see it: each end's names as written, its type,
    and the sentences (indexes into the paper's) that state the relation."""

    src: tuple[str, ...]
    tgt: tuple[str, ...]
    src_type: str
    tgt_type: str
    cited: tuple[int, ...]


def _names() -> tuple[str, ...]:
    per_sentence = ("n", "background", "finding", "undecided", "known_phrase", "label_background",
                    "label_finding", "number", "statistic", "hedge", "compare",
                    *(f"cue_{c}" for c in CUES))  # fmt: skip
    return (
        "rule_background", "rule_finding", "rule_undecided",
        *(f"cited_{n}" for n in per_sentence),
        *(f"cited_share_{n}" for n in per_sentence[1:]),
        "first_cited", "last_cited", "first_own", "cited_before_own", "cited_in_title",
        "sentences", "structured", "opening_cited",
        "cited_after_own", "cited_last_sentence", "src_rank", "tgt_rank",
        *(f"word_{w}" for w in CUE_WORDS),
        "src_first", "tgt_first", "src_mentions", "tgt_mentions", "both_mentions",
        "src_in_title", "tgt_in_title",
        "relations", "src_degree", "tgt_degree", "order", "order_share", "same_first",
        *(f"src_{t}" for t in TYPES), *(f"tgt_{t}" for t in TYPES),
    )  # fmt: skip


FEATURES: tuple[str, ...] = _names()


def features(sentences: Sequence[Sentence], pairs: Sequence[Pair]) -> list[list[float]]:
    """One row of :data:`FEATURES` per relation of a paper (``sentences``: its title and
    abstract, as :func:`~fastbmrag.text.sentences.abstract_sentences` splits them)."""
    roles = sentence_roles(sentences)
    labels = [section_role(label) for label in sentence_labels(sentences)]
    texts = [s.text for s in sentences]
    lows = [t.casefold() for t in texts]
    body = [i for i, s in enumerate(sentences) if s.where == ABSTRACT]
    n = max(len(sentences), 1)
    own = next((i for i in body if CUES["own"].search(texts[i])), None)
    structured = any(label for label in sentence_labels(sentences))
    firsts = [min(p.cited, default=n) for p in pairs]
    order = sorted(range(len(pairs)), key=lambda k: (firsts[k], k))
    rank = {k: r for r, k in enumerate(order)}
    degree: dict[str, int] = {}
    for p in pairs:
        for end in {_key(p.src), _key(p.tgt)}:
            degree[end] = degree.get(end, 0) + 1
    words = [set(_WORD.findall(low)) for low in lows]
    mentions = {_key(e): len(_mentioned(lows, e)) for p in pairs for e in (p.src, p.tgt)}
    ranked = sorted(set(mentions.values()), reverse=True)
    rows = []
    for k, p in enumerate(pairs):
        cited = [i for i in p.cited if 0 <= i < len(sentences)]
        said = [BACKGROUND if any(named_as_known(texts[i], a, b) for a in p.src for b in p.tgt)
                else roles[i] for i in cited]  # fmt: skip
        role, source = relation_role(said)
        per = _per_sentence(cited, said, labels, texts, p)
        count = max(len(cited), 1)
        src_at = _mentioned(lows, p.src)
        tgt_at = _mentioned(lows, p.tgt)
        title = [i for i, s in enumerate(sentences) if s.where == TITLE]
        rows.append([
            float(role == BACKGROUND and source == FROM_TEXT),
            float(role == FINDING and source == FROM_TEXT),
            float(source != FROM_TEXT),
            *per,
            *(v / count for v in per[1:]),
            min(cited, default=n) / n, max(cited, default=n) / n,
            (own if own is not None else n) / n,
            float(sum(own is not None and i < own for i in cited)),
            float(any(i in title for i in cited)),
            float(len(sentences)), float(structured),
            float(sum(i in body[:2] for i in cited)),
            float(sum(own is not None and i > own for i in cited)),
            float(bool(body) and body[-1] in cited),
            float(ranked.index(mentions[_key(p.src)])), float(ranked.index(mentions[_key(p.tgt)])),
            *(float(sum(w in words[i] for i in cited)) for w in CUE_WORDS),
            min(src_at, default=n) / n, min(tgt_at, default=n) / n,
            float(len(src_at)), float(len(tgt_at)), float(len(set(src_at) & set(tgt_at))),
            float(any(i in title for i in src_at)), float(any(i in title for i in tgt_at)),
            float(len(pairs)), float(degree[_key(p.src)]), float(degree[_key(p.tgt)]),
            float(rank[k]), rank[k] / max(len(pairs), 1),
            float(min(src_at, default=n) == min(tgt_at, default=n)),
            *(float(p.src_type == t) for t in TYPES), *(float(p.tgt_type == t) for t in TYPES),
        ])  # fmt: skip
    return rows


def _per_sentence(
    cited: Sequence[int], said: Sequence[str], labels: Sequence[str], texts: Sequence[str],
    p: Pair,
) -> list[float]:  # fmt: skip
    known = [any(named_as_known(texts[i], a, b) for a in p.src for b in p.tgt) for i in cited]
    return [
        float(len(cited)),
        float(sum(r == BACKGROUND for r in said)),
        float(sum(r == FINDING for r in said)),
        float(sum(r not in (BACKGROUND, FINDING) for r in said)),
        float(sum(known)),
        float(sum(labels[i] == BACKGROUND for i in cited)),
        float(sum(labels[i] == FINDING for i in cited)),
        float(sum(bool(_NUMBER.search(texts[i])) for i in cited)),
        float(sum(bool(_STATISTIC.search(texts[i])) for i in cited)),
        float(sum(bool(_HEDGE.search(texts[i])) for i in cited)),
        float(sum(bool(_COMPARE.search(texts[i])) for i in cited)),
        *(float(sum(bool(cue.search(texts[i])) for i in cited)) for cue in CUES.values()),
    ]


def _key(names: Sequence[str]) -> str:
    return min((n.casefold() for n in names), default="")


def _mentioned(lows: Sequence[str], names: Sequence[str]) -> list[int]:
    """The sentences that write one of ``names`` (case folded)."""
    wanted = [n.casefold() for n in names if n.strip()]
    return [i for i, low in enumerate(lows) if any(w in low for w in wanted)]


@dataclass(frozen=True)
class BackgroundModel:
    """The shipped model: ``probabilities(sentences, pairs)`` gives each relation's probability
    of being background; at or above ``threshold`` it is background."""

    booster: Any
    threshold: float
    card: dict[str, Any]

    def probabilities(self, sentences: Sequence[Sentence], pairs: Sequence[Pair]) -> list[float]:
        if not pairs:
            return []
        import numpy as np

        rows = np.asarray(features(sentences, pairs), dtype=np.float64)
        return [float(p) for p in self.booster.predict(rows)]


@functools.lru_cache(maxsize=1)
def load_model() -> BackgroundModel | None:
    """The shipped model, or None where ``lightgbm`` is not installed (or the model file is
    missing): the rules decide then."""
    try:
        import lightgbm
    except ImportError:
        return None
    if not MODEL_FILE.is_file() or not CARD_FILE.is_file():
        return None
    card = json.loads(CARD_FILE.read_text(encoding="utf-8"))
    if tuple(card.get("features", ())) != FEATURES:
        return None  # a model of other features: the rules decide
    booster = lightgbm.Booster(model_str=MODEL_FILE.read_text(encoding="utf-8"))
    return BackgroundModel(booster, float(card["threshold"]), card)
