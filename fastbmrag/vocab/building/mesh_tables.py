"""Tables derived from MeSH's tree structure and terms for the fallback stages: completions of
a word to a term, the most general descriptor for a head word, terms one word longer than a
name, and drug-induced forms of conditions."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from fastbmrag.vocab.rules.chemistry import ACTING_ON
from fastbmrag.vocab.rules.keys import BAG_STOP, COMPLETION_HEADS, RELATION_WORDS, bag_key, tokens

# C25 Chemically-Induced Disorders, and words that name the cause in a drug-induced form.
CHEMICALLY_INDUCED_TREE = "C25"


PROCESS_TREE = "C23.550"


DRUG_CAUSE_WORDS = frozenset(["drug", "substance", "medication", "chemical", "chemically"])


def completion_tables(index: Iterable[str], bag: Iterable[str]) -> dict[str, Any]:
    """Which :data:`COMPLETION_HEADS` complete a phrase to a MeSH key, as bit masks (bit i =
    head i): ``completions`` keyed by an index key less a final head ("renalfailure" ->
    syndrome? "hepatorenal" -> "hepatorenalsyndrome"), ``bag_completions`` by a bag key less
    one head word. The normaliser tries "name + head" for every head only where the mask
    says that the phrase is a key."""
    completions: dict[str, int] = {}
    for key in index:
        for bit, head in enumerate(COMPLETION_HEADS):
            if key.endswith(head):
                stem = key[: len(key) - len(head)]
                completions[stem] = completions.get(stem, 0) | 1 << bit
    bag_completions: dict[str, int] = {}
    for key in bag:
        words = key.split()
        for bit, head in enumerate(COMPLETION_HEADS):
            if head in words:
                rest = list(words)
                rest.remove(head)
                stem = " ".join(rest)
                bag_completions[stem] = bag_completions.get(stem, 0) | 1 << bit
    return {
        "completion_heads": list(COMPLETION_HEADS),
        "completions": completions,
        "bag_completions": bag_completions,
    }


def subtree_sizes(trees: list[list[str]]) -> list[int]:
    """For each descriptor, how many descriptors sit below it in the disease trees."""
    owner = {tn: i for i, tns in enumerate(trees) for tn in tns}
    below: dict[int, set[int]] = {}
    for j, tns in enumerate(trees):
        for tn in tns:
            parts = tn.split(".")
            for k in range(1, len(parts)):
                i = owner.get(".".join(parts[:k]))
                if i is not None and i != j:
                    below.setdefault(i, set()).add(j)
    return [len(below.get(i, ())) for i in range(len(trees))]


def head_words(
    extend: dict[str, dict[int, int]],
    index: dict[str, dict[int, int]],
    trees: list[list[str]],
    size: list[int],
    uses: dict[tuple[str, int], int],
) -> dict[str, int]:
    out: dict[str, int] = {}
    for word, items in extend.items():
        if word in index or len(word) < 4 or word in BAG_STOP:
            continue
        # Largest subtree, then most two-word terms with the word ("Rigidity, Muscle",
        # "Muscular Rigidity", "Cogwheel Rigidity" ... all name Muscle Rigidity).
        ranked = sorted(
            ((size[i], uses[(word, i)], i) for i in items if trees[i] and (word, i) in uses),
            reverse=True,
        )
        if ranked and (len(ranked) == 1 or ranked[0][:2] > ranked[1][:2]):
            out[word] = ranked[0][2]
    return out


def drug_induced_forms(
    table: list[list[str]], trees: list[list[str]], keys_of: list[set[str]]
) -> dict[str, int]:
    """``{bag key without the cause: descriptor}`` for the drug-induced disease descriptors.

    A descriptor is drug-induced when its name says so ("Abnormalities, Drug-Induced") or it
    sits in C25 (Chemically-Induced Disorders) with a term naming a drug or other substance
    as the cause. Each of its terms that does, less the cause words, is a key: "Hepatitis,
    Drug-Induced" -> "hepatitis", "Drug-Induced Liver Injury" -> "injury liver". Keys that
    several descriptors share are dropped.
    """
    found: dict[str, set[int]] = {}
    for y, keys in enumerate(keys_of):
        if not trees[y]:
            continue
        name = set(tokens(table[y][1]))
        in_c25 = any(t.startswith(CHEMICALLY_INDUCED_TREE) for t in trees[y])
        if not (in_c25 or ("induced" in name and name & DRUG_CAUSE_WORDS)):
            continue
        for key in keys:
            words = key.split()
            rest = [w for w in words if w not in DRUG_CAUSE_WORDS]
            if rest and len(rest) < len(words):
                found.setdefault(" ".join(rest), set()).add(y)
    return {k: next(iter(ys)) for k, ys in sorted(found.items()) if len(ys) == 1}


def supersets(
    bags_of: list[set[str]], trees: list[list[str]], bag: dict[str, dict[int, int]]
) -> dict[str, int | list[int]]:
    """``{bag key: descriptor(s)}`` for disease terms of three or four words, keyed by the term
    less one word: a name that leaves out one word of a term ("Duchenne dystrophy" ->
    Muscular Dystrophy, Duchenne; "stress incontinence" -> Urinary Incontinence, Stress).
    Keys that are terms of their own are left out. Where several descriptors share a key,
    the one above all the others in the tree is kept, else all of them, most general
    (shallowest) first, for the context to choose ("pulmonary nodule": Solitary Pulmonary
    Nodule and Multiple Pulmonary Nodules, neither above the other)."""
    found: dict[str, set[int]] = {}
    for i, keys in enumerate(bags_of):
        if not trees[i]:
            continue
        for key in keys:
            words = key.split()
            if not 3 <= len(words) <= 4 or len(set(words)) < len(words):
                continue
            for w in words:
                rest = " ".join(x for x in words if x != w)
                if rest not in bag:
                    found.setdefault(rest, set()).add(i)
    out: dict[str, int | list[int]] = {}
    for key, items in found.items():
        if len(items) > 4:
            continue
        ranked = sorted(items, key=lambda i: (min(t.count(".") for t in trees[i]), i))
        top = [t + "." for t in trees[ranked[0]]]
        above_all = all(any(t.startswith(tuple(top)) for t in trees[i]) for i in ranked[1:])
        out[key] = ranked[0] if above_all else ranked
    return out


def _is_drug_induced(name: str, trees: list[str]) -> bool:
    words = set(tokens(name))
    in_c25 = any(t.startswith(CHEMICALLY_INDUCED_TREE) for t in trees)
    return in_c25 or ("induced" in words and bool(words & DRUG_CAUSE_WORDS))


def induced_children(table: list[list[str]], trees: list[list[str]]) -> dict[int, int]:
    """``{descriptor: its drug-induced child}`` where a disease descriptor has exactly one
    drug-induced descriptor right below it in the tree whose name, less the cause words, is
    part of the parent's name (Congenital Abnormalities -> Abnormalities, Drug-Induced;
    not Movement Disorders -> Akathisia, Drug-Induced)."""
    owner = {tn: i for i, tns in enumerate(trees) for tn in tns}
    found: dict[int, set[int]] = {}
    for y, tns in enumerate(trees):
        if not tns or not _is_drug_induced(table[y][1], tns):
            continue
        name = set(bag_key(table[y][1]).split())
        rest = name - DRUG_CAUSE_WORDS
        if not rest or rest == name:
            continue  # the name does not say "drug-induced" (Lead Poisoning, Myotoxicity)
        for tn in tns:
            parent = owner.get(tn.rsplit(".", 1)[0]) if "." in tn else None
            if (
                parent is not None
                and parent != y
                and rest <= set(bag_key(table[parent][1]).split())
            ):
                found.setdefault(parent, set()).add(y)
    return {x: next(iter(ys)) for x, ys in sorted(found.items()) if len(ys) == 1}


def completes_word(word: str, term: str) -> bool:
    """Whether a two-word chemical term completes ``word`` written alone: the term writes the
    word first, in its own order, and the word after it names the word's form or kind
    ("Ecstasy (Drug)", "Contrast Agent", "Vincristine Sulfate"). A word written before it
    narrows the substance to a use or a kind of it ("Medical Cannabis"; "Cannabis, Medical"
    is that term inverted), and a relation word names another molecule, one that acts on it
    ("LPS Receptor", "cAMP Phosphodiesterase", "Fat Substitute"); a short form after it names
    a substance of its own ("OP-CCK")."""
    if "," in term:
        return False
    toks = [t for t in tokens(term) if t not in BAG_STOP]  # the words of its bag key
    after = toks[-1]
    return (
        toks[0] == word
        and after not in RELATION_WORDS
        and after not in ACTING_ON
        and not (len(after) > 5 and after.endswith("ase"))  # an enzyme acting on it
        and not re.split(r"[\s/-]", term)[-1].isupper()  # a short form names a substance of its own
    )
