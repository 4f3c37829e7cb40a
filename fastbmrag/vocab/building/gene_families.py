"""Gene families in the names HGNC and NCBI Gene give their members: the stems that begin the
names of several genes (never taken as one member's name), and the HGNC gene group a stem or a
numbered series of symbols names (a family node, never a member)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fastbmrag.vocab.building.sources import GeneRecord
from fastbmrag.vocab.rules.keys import RELATION_WORDS, gene_key, gene_key_of, raw_tokens


def family_stems(genes: Sequence[GeneRecord]) -> dict[tuple[str, ...], set[int]]:
    """Token sequences that begin longer names of two or more genes, with those genes: a
    family's stem ("cytochrome P450" of "cytochrome P450 2E1", "TCF" of TCF4 and TCF7). NCBI
    Gene lists such stems among one member's synonyms and protein names; taken as that gene's
    name they would put the family's other members on it, so they are not indexed."""
    owners: dict[tuple[str, ...], set[int]] = {}
    for i, g in enumerate(genes):
        names = [g.symbol, g.name, *g.prev_symbols, *g.alias_symbols, *g.prev_names]
        names += [*g.alias_names, *g.ncbi_synonyms, *g.protein_names]
        for name in names:
            toks = tuple(raw_tokens(name))
            for n in range(1, len(toks)):
                if toks[n] in RELATION_WORDS:
                    continue  # "tumor necrosis factor alpha induced protein": about it, no kind of it
                owners.setdefault(toks[:n], set()).add(i)
    return {stem: who for stem, who in owners.items() if len(who) >= 2}


def stem_groups(
    genes: Sequence[GeneRecord], family: dict[tuple[str, ...], set[int]]
) -> dict[str, str]:
    """``{gene key of a stem: HGNC gene group}`` where every gene whose names begin with the
    stem belongs to that one group: the family's name as its members' names write it
    ("matrix metalloproteinase" of "matrix metalloproteinase 9" and the others, all in the group
    Matrix metallopeptidases), which HGNC's group name need not be. Stems written alike are one
    key, and all their genes must share the group ("IL" begins names of many groups). Where
    the names give none, a numbered series of symbols names its group when all its members
    are in it and make at least half of it ("MAPK" of MAPK1 ... MAPK15; not "GLI" of the
    C2H2-type zinc fingers)."""

    def single_group(who: set[int]) -> str | None:
        shared = set.intersection(*({gid for gid, _ in genes[i].groups} for i in who))
        return next(iter(shared)) if len(shared) == 1 else None

    owners: dict[str, set[int]] = {}
    for stem, who in family.items():
        owners.setdefault(gene_key_of(stem), set()).update(who)
    out = {key: gid for key, who in owners.items() if (gid := single_group(who)) is not None}
    size: dict[str, int] = {}
    for g in genes:
        for gid, _ in g.groups:
            size[gid] = size.get(gid, 0) + 1
    series: dict[str, set[int]] = {}
    for i, g in enumerate(genes):
        if m := _NUMBERED_SYMBOL_RE.fullmatch(g.symbol):
            series.setdefault(gene_key(m.group(1)), set()).add(i)
    for key, who in series.items():
        gid = single_group(who) if len(who) >= 2 and key not in out else None
        if gid is not None and 2 * len(who) >= size[gid]:
            out[key] = gid
    return out


# A member's symbol in a numbered series: the series' letters, its number, perhaps one more
# letter ("MAPK14", "WNT2B"); the letters with every member in one group name the group.
_NUMBERED_SYMBOL_RE = re.compile(r"([A-Z]{2,})\d+[A-Z]?")
