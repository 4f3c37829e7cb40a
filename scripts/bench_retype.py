"""Names a model typed ``other`` or ``cell``: how many the indexer grounds, right and wrong.

A model often types a disease, drug or gene name ``other`` ("Tinnitus", "methotrexate"). The
indexer (:func:`fastbmrag.index.edges.name_ends`) gives such a name the type and id of the one
gene, disease or chemical whose own symbol, name or entry term it is, or, for a short form
the paper defines, whose term its long form is (``type_from`` ``vocabulary``); with two or none
it stays ungrounded. Scored on BioRED's training split, each
gold mention's text given as the model would have written it, typed ``other`` (and ``cell``):

* **entities**: gene, disease and chemical mentions with a scorable gold id (a gene through NCBI
  Gene's cross-reference to HGNC, a disease or chemical by its MeSH descriptor): right / wrong /
  none;
* **not entities**: variant, species and cell-line mentions: any id given is wrong;
* **each type typed as itself**: the same mentions typed as the model should (the guard on a
  gene's short form of capitals with no support in the paper is read on the genes);
* **diseases, chemicals, not entities typed gene**: a model's mistyping, where a gene id is
  wrong (the guard's other side).

Halves by PMID parity: even tunes, odd is held out. The mention's document is the context.

    python scripts/bench_retype.py [--biored FILE --gene-info FILE] [--json] [--errors 20]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from corpora import BIORED_TYPES, SHARED, read_gene_xrefs, read_pubtator

from fastbmrag.index.edges import name_ends
from fastbmrag.vocab.loading import load_normalizer

NOT_ENTITIES = ("SequenceVariant", "OrganismTaxon", "CellLine")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--biored", type=Path, default=SHARED / "biored" / "Train.PubTator")
    ap.add_argument(
        "--gene-info", type=Path, default=SHARED / "ncbi_gene" / "Homo_sapiens.gene_info.gz"
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--errors", type=int, default=0, help="print this many wrong ids")
    args = ap.parse_args(argv)
    norm = load_normalizer()
    genes = read_gene_xrefs(args.gene_info)
    out: dict[str, dict[str, dict[str, int]]] = {}
    wrong: list[str] = []
    for doc in read_pubtator(args.biored):
        half = "even (tuning)" if int(doc.pmid) % 2 == 0 else "odd (held out)"
        for text, kind, ids in doc.mentions:
            t = BIORED_TYPES.get(kind)
            if t == "gene":
                gold = {genes[i] for i in ids if i in genes}
            elif t:
                gold = {i.removeprefix("MESH:") for i in ids}
                gold = {i for i in gold if i[:1] == "D" and i[1:].isdigit()}
            elif kind in NOT_ENTITIES:
                gold = set()
            else:
                continue
            if t and not gold:
                continue  # no scorable concept
            for typed in ("other", "cell", *([t] if t else []), *([] if t == "gene" else ["gene"])):
                [end, *_] = name_ends(norm, text, typed, doc.context)
                got = end.norm.ontology_id
                row = out.setdefault(half, {}).setdefault(
                    f"{f'{t}s' if t else 'not entities'} typed {typed}",
                    {"names": 0, "right": 0, "wrong": 0, "none": 0},
                )
                row["names"] += 1
                verdict = "none" if got is None else "right" if got in gold else "wrong"
                row[verdict] += 1
                if verdict == "wrong":
                    wrong.append(f"{text!r} ({kind}, typed {typed}) -> {got} {end.name}; gold {gold}")
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for half, rows in out.items():
            for name, row in rows.items():
                print(f"{half:15} {name:28} {row}")
    for line in wrong[: args.errors]:
        print("WRONG", line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
