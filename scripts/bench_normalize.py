"""Accuracy, precision and speed of the dictionary normaliser on annotated corpora.

Sets: BC5CDR's Training, Development and Test splits (Disease and Chemical mentions, MeSH ids)
and BioRED's training split (gene mentions with NCBI Gene ids, compared through NCBI Gene's
cross-reference to HGNC; disease and chemical mentions with MeSH ids), halved by PMID parity.
Rules are tuned on BC5CDR Training and BioRED-even; BC5CDR Development, Test and BioRED-odd are
held out: a change is kept only if it loses on none of them. Every gold mention is
normalised with its type as the hint and its document (title + abstract) as the context.

Per set and type: accuracy (right / scored), **precision** (right / mentions given an id), and
the split right / wrong id / no id, and how many wrong ids are an ancestor or descendant of a
gold id in MeSH's trees (less harmful: a filter on the broader concept still finds them). A
mention is right when the returned id is one of its gold
ids ("D1|D2" composite mentions: any of them); a coordination ("SMAD2/3") when every id of its
parts is one of them. A gene family's node (an HGNC gene group) counts as no id. Not scored: gold id -1 or none (no concept);
genes with no HGNC cross-reference (other species); diseases and chemicals whose gold ids are
MeSH ids (OMIM ids). Mentions whose gold ids are all MeSH supplementary concepts (C ids) are
scored apart, as "disease C ids" and "chemical C ids". Gold ids missing from the bundled MeSH
edition stay scored: errors (a C id NLM has since made a descriptor among them).

Speed: load time of the vocabularies (fresh normaliser, median of 3), then normalisations per
second, single thread, fresh normaliser and empty caches per pass, median of 5 passes: every
scored mention in corpus order, with and without its document as context, and each distinct
(name, type) once.

Usage::

    python scripts/bench_normalize.py [--set Test --set BioRED-odd] [--stages] [--errors 40]
        [--vocab DIR]

``--stages`` adds, per set and type, each stage's (``matched_by``) hits, right, wrong and
precision.

``--vocab`` scores another build of the vocabularies, for example one made from the MeSH
edition a corpus was annotated with (``python scripts/build_vocab.py --mesh-xml desc2015.xml
-o DIR``; BC5CDR's gold ids are all from before MeSH 2016).
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import time
from pathlib import Path

from corpora import SHARED, Row, bc5cdr_rows, biored_rows, read_gene_xrefs

from fastbmrag.vocab.building.sources import GROUP_PREFIX
from fastbmrag.vocab.loading import BUNDLED_DIR
from fastbmrag.vocab.normalizer import DictionaryNormalizer, clear_caches

TUNE = ("Training", "BioRED-even")
HELD_OUT = ("Development", "Test", "BioRED-odd")
SETS = TUNE + HELD_OUT
TYPES = ("gene", "disease", "chemical", "disease C ids", "chemical C ids")


def load_set(name: str, args: argparse.Namespace) -> list[Row]:
    if name.startswith("BioRED"):
        parity = name.endswith("odd")
        return biored_rows(args.biored, read_gene_xrefs(args.gene_info), int(parity))
    return bc5cdr_rows(args.bc5cdr / f"CDR_{name}Set.PubTator.txt")


def scored(row: Row) -> str | None:
    """The class a mention is scored in (its type; a disease or chemical whose gold ids are all
    MeSH supplementary concepts in "TYPE C ids"), None when it is not scored."""
    _, typ, _, gold = row
    if typ == "gene":
        return typ if any(g.startswith("HGNC:") for g in gold) else None
    if any(g.startswith("D") for g in gold):
        return typ
    return f"{typ} C ids" if any(g.startswith("C") for g in gold) else None


def report(
    name: str, rows: list[Row], norm: DictionaryNormalizer, args: argparse.Namespace
) -> None:
    right: collections.Counter[str] = collections.Counter()
    wrong: collections.Counter[str] = collections.Counter()
    none: collections.Counter[str] = collections.Counter()
    how: collections.Counter[tuple[str, str, str]] = collections.Counter()
    related: collections.Counter[str] = collections.Counter()  # wrong, but in the gold's tree
    errors: dict[str, list[str]] = collections.defaultdict(list)
    for row in rows:
        if (cls := scored(row)) is None:
            continue
        mention, kind, context, gold = row
        res = norm.normalize(mention, kind, context)
        typ = cls
        given = {p.ontology_id for p in res.parts} or {res.ontology_id} - {None}
        if any(g.startswith(GROUP_PREFIX) for g in given):
            given = set()  # a gene family's node: no id for a mention whose gold is one gene
        outcome = "none" if not given else "right" if given <= set(gold) else "wrong"
        {"right": right, "wrong": wrong, "none": none}[outcome][typ] += 1
        how[(typ, res.matched_by, outcome)] += 1
        if outcome == "wrong" and any(
            g in norm.ancestors(i) or i in norm.ancestors(g) for i in given for g in gold
        ):
            related[typ] += 1
        if outcome != "right":
            errors[typ].append(
                f"  {outcome:5s} {mention!r} gold={'|'.join(gold)} got={res.ontology_id} "
                f"{res.normalized_name!r} ({res.matched_by})"
            )
    for typ in TYPES:
        total = right[typ] + wrong[typ] + none[typ]
        if not total:
            continue
        given = right[typ] + wrong[typ]
        label = f"{name} ({'held out' if name in HELD_OUT else 'tune'})"
        print(
            f"{label:24s} {typ:14s} accuracy {right[typ] / total:.4f}  precision "
            f"{right[typ] / max(given, 1):.4f}  right {right[typ]} / wrong {wrong[typ]} "
            f"({related[typ]} in the gold's tree) / no id {none[typ]} of {total}"
        )
        if args.stages:
            for m in sorted({k[1] for k in how if k[0] == typ}):
                r, w, n = (how[(typ, m, o)] for o in ("right", "wrong", "none"))
                precision = f"{r / (r + w):.3f}" if r + w else "-"
                print(f"    {m:13s} hits {r + w + n:5d}  right {r:5d}  wrong {w:4d}  "
                      f"no id {n:4d}  precision {precision}")  # fmt: skip
        if args.errors:
            sample = errors[typ][:]
            random.Random(args.seed).shuffle(sample)
            print("\n".join(sample[: args.errors]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--set", action="append", choices=SETS, help="default: all five")
    ap.add_argument("--stages", action="store_true", help="each stage's hits and precision")
    ap.add_argument("--bc5cdr", type=Path, default=SHARED / "bc5cdr")
    ap.add_argument("--biored", type=Path, default=SHARED / "biored" / "Train.PubTator")
    ap.add_argument(
        "--gene-info", type=Path, default=SHARED / "ncbi_gene" / "Homo_sapiens.gene_info.gz"
    )
    ap.add_argument("--errors", type=int, default=0, help="print this many misses per type and set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--vocab", type=Path, default=BUNDLED_DIR, help="vocabulary directory (default: bundled)"
    )
    args = ap.parse_args()

    loads = []
    for _ in range(3):
        t0 = time.perf_counter()
        norm = DictionaryNormalizer.from_dir(args.vocab)
        loads.append(time.perf_counter() - t0)
    print(f"load ({args.vocab}, median of 3): {statistics.median(loads):.3f} s")
    print("per type: accuracy, precision, right / wrong / no id")

    all_rows: list[Row] = []
    for name in args.set or SETS:
        rows = load_set(name, args)
        all_rows += [r for r in rows if scored(r)]
        report(name, rows, norm, args)

    del norm  # speed is measured on fresh normalisers
    names = [(m, t) for m, t, _c, _g in all_rows]
    with_ctx = [(m, t, c) for m, t, c, _g in all_rows]
    distinct = list(dict.fromkeys(names))
    for label, batch in (
        ("without context", names),
        ("with context", with_ctx),
        ("distinct names, no context", distinct),
    ):
        times = []
        for _ in range(5):
            fresh = DictionaryNormalizer.from_dir(args.vocab)
            clear_caches()  # no help from the accuracy pass above, or from the pass before
            t0 = time.perf_counter()
            for item in batch:
                fresh.normalize(*item)
            times.append(time.perf_counter() - t0)
        dt = statistics.median(times)
        print(
            f"speed {label}: {len(batch) / dt:,.0f} normalisations/s ({len(batch)} in {dt:.2f} s, "
            "median of 5 passes)"
        )


if __name__ == "__main__":
    main()
