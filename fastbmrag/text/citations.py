"""Inline citations, the one way the model points at what it read: "[3]", "[3][5]", "[3, 5]",
"[3-5]". Stage 2's refined descriptions cite main-text sentences, answers cite evidence items;
both are read here.

A range expands to its numbers ("[3-5]" -> 3, 4, 5) up to :data:`MAX_RANGE` of them; a longer
one ("[3-900]") is read as its two ends, never as hundreds of citations.
"""

from __future__ import annotations

import re

MAX_RANGE = 50
# One bracketed group: numbers joined by commas, semicolons or dashes.
CITATION = re.compile(r"\[\s*(\d+(?:\s*(?:[,;]|-|\u2013)\s*\d+)*)\s*\]")
_MARKERS = re.compile(r"\s*(?:\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\])+")


# A paper's own numbered reference ("... in endometriosis [12].", "[3-5]"), read where the model
# reads the paper: not locants that open a chemical name ("[1,2,4]triazole").
REFERENCE = re.compile(r"\s*\[\s*\d+(?:\s*[,;\u2013-]\s*\d+)*\s*\](?!\w)")


def unreferenced(text: str) -> str:
    """``text`` without the paper's own numbered references, as a prompt shows it: there the
    only "[n]" is what the model cites (a sentence's or an evidence item's number), so a
    reference it repeats cannot point at another sentence. The quotes stay as the paper has
    them."""
    if "[" not in text:
        return " ".join(text.split())
    return _tidy(REFERENCE.sub("", text))


def _tidy(text: str) -> str:
    """Whitespace collapsed, none before a punctuation mark a removed marker left it in front of."""
    return " ".join(re.sub(r"\s+([.,;:)])", r"\1", text).split())


def numbers(group: str) -> list[int]:
    """The numbers of one group's inside: "3, 5" -> [3, 5], "3-5" -> [3, 4, 5]."""
    out: list[int] = []
    for part in re.split(r"\s*[,;]\s*", group.strip()):
        bounds = [int(b) for b in re.split(r"\s*[-\u2013]\s*", part)]
        if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] < MAX_RANGE:
            out += range(bounds[0], bounds[1] + 1)
        else:
            out += bounds
    return out


def has_citation(text: str) -> bool:
    return CITATION.search(text) is not None


def strip(text: str) -> tuple[str, list[int]]:
    """``text`` without its markers, and the cited numbers in order of first use (stage 2:
    "IL1B rose [12][14]." -> ("IL1B rose.", [12, 14]))."""
    cited = dict.fromkeys(n for m in CITATION.finditer(text) for n in numbers(m.group(1)))
    return _tidy(_MARKERS.sub("", text)), list(cited)


def keep(text: str, n: int) -> tuple[str, list[int], list[int]]:
    """``text`` with citations 1..``n`` kept, each written alone ("[3, 5]" -> "[3][5]", "[3-5]"
    -> "[3][4][5]"), and the others removed (an answer's citations of evidence items).

    Returns (text, the kept numbers in order of first use, the removed numbers).
    """
    valid: dict[int, None] = {}
    removed: list[int] = []

    def repl(m: re.Match[str]) -> str:
        kept = []
        for k in numbers(m.group(1)):
            if 1 <= k <= n:
                kept.append(k)
                valid.setdefault(k)
            else:
                removed.append(k)
        return "".join(f"[{k}]" for k in kept)

    out = CITATION.sub(repl, text)
    out = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", out)).strip()
    return out, list(valid), removed
