"""How gene names are written beyond their dictionary forms: one general rule each.

* Coordinations and ranges name several genes at once: "SMAD2/3", "CDK4/6", "ERK1/2",
  "IL-4 and -13", "IL-4, IL-5 and IL-13", "TGF-beta1-3". :func:`coordination_parts` writes out
  each gene's own name; the normaliser resolves every part and the entity keeps all their ids
  (an edge on it becomes one edge per gene).
* An isoform or transcript variant after a symbol: "TP63 gamma", "CD44v6", "CD44 variant 6".
  :func:`isoform_stripped` gives the symbol; the normaliser takes it only where the whole name
  is no gene's and the rest is an approved symbol ("IL-1 beta" is IL1B, not an isoform of IL1).
* Names written out of their dictionary form, :func:`respellings`: a Greek letter's name glued
  to a symbol's capitals ("CEBPalpha" as "CEBP alpha"), and a short form in parentheses
  inside a name ("Toll-like receptor (TLR) 4" as "TLR 4" or "Toll-like receptor 4").
"""

from __future__ import annotations

import re

MAX_PARTS = 6  # a longer list or range is a family, not a coordination of named genes

_SPLIT = re.compile(r"\s*(?:,\s*(?:and|or)\s+|,\s*|\s+and\s+|\s+or\s+|\s*/\s*)", re.I)
_ROMAN = r"(?:I{1,3}|IV|VI{0,3}|IX|X)"
_TRAILING_NUMBER = re.compile(
    rf"^(.*?[A-Za-z\u0370-\u03ff-]??)(\d+|(?<=-){_ROMAN}|(?<=[a-z]){_ROMAN})$"
)
_NUMBER_OR_SUFFIX = re.compile(rf"^-?(?:\d+[A-Za-z]?|{_ROMAN})$")
_RANGE = re.compile(r"^(.*[A-Za-z\u0370-\u03ff])(\d+)-(\d+)$")
# A symbol with its number, then an isoform's Greek letter: "TP63 gamma", "TP63-alpha".
_GREEK_ISOFORM = re.compile(
    r"^([A-Za-z][A-Za-z0-9]*\d(?:-\d+)?|[A-Za-z]+-\d+)[- ]?(?:alpha|beta|gamma|delta|[αβγδ])$"
)
# A symbol, then a transcript variant: "CD44v6", "CD44 variant 6", "VEGFA isoform 2".
_VARIANT = re.compile(
    r"^([A-Za-z][A-Za-z0-9-]*?)(?:v\d+|\s+(?:transcript\s+)?(?:variant|isoform)\s+\d+)$"
)


def coordination_parts(name: str) -> list[str]:
    """The genes a coordinated or ranged name lists, each written in full; [] when it is none.

    A part that is only a number or a roman numeral ("SMAD2/3", "IL-4 and 13", "ROCK-I/II") or
    starts with a hyphen ("IL-4 and -13", "TGF-beta1 and -beta2") takes the stem of the first
    part: the first part up to its trailing number or numeral, or up to its last hyphen.
    """
    name = name.strip()
    if m := _RANGE.match(name):
        lo, hi = int(m.group(2)), int(m.group(3))
        if lo < hi and hi - lo < MAX_PARTS:
            return [f"{m.group(1)}{n}" for n in range(lo, hi + 1)]
        return []
    parts = [p for p in _SPLIT.split(name) if p]
    if len(parts) < 2 or len(parts) > MAX_PARTS:
        return []
    first = parts[0]
    out = [first]
    for part in parts[1:]:
        if part.startswith("-") and "-" in first:
            out.append(first[: first.rindex("-")] + part)
        elif _NUMBER_OR_SUFFIX.match(part) and (m := _TRAILING_NUMBER.match(first)):
            out.append(m.group(1) + part.lstrip("-"))
        else:
            out.append(part)
    return out


def isoform_stripped(name: str) -> str | None:
    """The symbol before an isoform's Greek letter or a transcript variant ("TP63 gamma" ->
    "TP63", "CD44v6" -> "CD44"), or None."""
    m = _GREEK_ISOFORM.match(name.strip()) or _VARIANT.match(name.strip())
    return m.group(1) if m else None


# A Greek letter's name in lower case right after two capitals (or a digit and a capital).
_GLUED_GREEK = re.compile(
    r"(?<=[A-Z0-9][A-Z])(alpha|beta|gamma|delta|epsilon|kappa|zeta|theta|eta|iota|lambda|mu|"
    r"sigma|tau|omega)(?![a-z])"
)
# A name, a short form in parentheses with at least one capital, then what follows: a number,
# a symbol's rest, words ("cyclooxygenase (COX)-2", "leukocyte antigen (HLA)-DRB1",
# "N-acetylglucosamine (O-GlcNAc) transferase").
_INNER_SHORT_FORM = re.compile(r"^(.*?\S)\s*\(([A-Za-z][A-Za-z0-9-]{0,9})\)\s*(.*)$")


def respellings(name: str) -> list[str]:
    """The name as the dictionary writes it, where it is written otherwise: the Greek letter
    glued to a symbol spaced off ("CEBPalpha" -> "CEBP alpha"); a short form in parentheses
    inside the name with what follows it, then the name without it ("Toll-like receptor (TLR)
    4" -> "TLR 4", "Toll-like receptor 4"). Empty where neither applies."""
    out = []
    spaced = _GLUED_GREEK.sub(r" \1", name)
    if spaced != name:
        out.append(spaced)
    m = _INNER_SHORT_FORM.match(name)
    if m and any(c.isupper() for c in m.group(2)):
        long, short, rest = m.groups()
        glue = "" if rest.startswith("-") or not rest else " "
        out += [f"{short}{glue}{rest}", f"{long}{glue}{rest}"]
    return out
