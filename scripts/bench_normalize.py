"""Accuracy and speed of the dictionary normaliser on the BioCreative V CDR corpus (BC5CDR).

Scoring: every gold Disease and Chemical mention of the PubTator files is normalised with its
type as the hint and its document (title + abstract) as the context. A mention counts as right
when the returned ontology id is one of its gold ids ("D1|D2" composite mentions: any of
them). Mentions with gold id -1 (no MeSH concept) are skipped; chemicals are scored only
where a gold id is a MeSH descriptor (D...), since the bundled vocabulary has descriptors but
no supplementary concepts (C...). Gold ids missing from MeSH 2024 (descriptors deleted or
merged since 2015) stay in the denominator: they count as errors.

Speed: load time of the bundled vocabularies (fresh normaliser, median of 3), then
normalisations per second, single thread, fresh normaliser (empty memo of context-free
results) and empty word caches per pass:
every scored mention in corpus order (names repeat, as they do when indexing), with and
without its document as context, and each distinct (name, type) once.

Usage::

    python scripts/bench_normalize.py [--corpus DIR] [--split Test] [--errors 40] [--vocab DIR]

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

from fastbmrag.vocab.normalizer import BUNDLED_DIR, DictionaryNormalizer, clear_caches

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared/data/bc5cdr"
SPLITS = ("Training", "Development", "Test")
NO_ID = ("-1",)


def read_pubtator(path: Path) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(mention, type, context, gold ids) for every Disease/Chemical mention (tuples of
    strings: the garbage collector stops tracking them, so the corpus does not slow the
    collections that run while timing)."""
    out: list[tuple[str, str, str, tuple[str, ...]]] = []
    title = abstract = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if "|t|" in line[:20]:
            title = line.split("|t|", 1)[1]
        elif "|a|" in line[:20]:
            abstract = line.split("|a|", 1)[1]
        else:
            parts = line.split("\t")
            if len(parts) >= 6 and parts[4] in ("Disease", "Chemical"):
                out.append(
                    (parts[3], parts[4].lower(), f"{title} {abstract}", tuple(parts[5].split("|")))
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split", action="append", choices=SPLITS, help="default: all three")
    ap.add_argument("--errors", type=int, default=0, help="print this many errors per type")
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

    all_rows = []
    for split in args.split or SPLITS:
        rows = read_pubtator(args.corpus / f"CDR_{split}Set.PubTator.txt")
        all_rows += rows
        right: collections.Counter[str] = collections.Counter()
        total: collections.Counter[str] = collections.Counter()
        how: collections.Counter[tuple[str, str, bool]] = collections.Counter()
        errors: dict[str, list[str]] = collections.defaultdict(list)
        for mention, typ, context, gold in rows:
            if gold == NO_ID:
                continue
            if typ == "chemical" and not any(g.startswith("D") for g in gold):
                continue
            res = norm.normalize(mention, typ, context)
            ok = res.ontology_id in gold
            total[typ] += 1
            right[typ] += ok
            how[(typ, res.matched_by, ok)] += 1
            if not ok:
                errors[typ].append(
                    f"  {mention!r} gold={'|'.join(gold)} got={res.ontology_id} "
                    f"{res.normalized_name!r} ({res.matched_by})"
                )
        for typ in ("disease", "chemical"):
            print(
                f"{split:12s} {typ:9s} accuracy {right[typ] / total[typ]:.4f} "
                f"({right[typ]}/{total[typ]})"
            )
            by = sorted({k[1] for k in how if k[0] == typ})
            print(
                "    "
                + ", ".join(
                    f"{m}: {how[(typ, m, True)]}/{how[(typ, m, True)] + how[(typ, m, False)]}"
                    for m in by
                )
            )
            if args.errors:
                rnd = random.Random(args.seed)
                sample = errors[typ][:]
                rnd.shuffle(sample)
                print("\n".join(sample[: args.errors]))

    del norm  # speed is measured on fresh normalisers
    names = [(m, t) for m, t, _c, g in all_rows if g != NO_ID]
    with_ctx = [(m, t, c) for m, t, c, g in all_rows if g != NO_ID]
    distinct = list(dict.fromkeys(names))
    for label, batch in (
        ("without context", names),
        ("with context", with_ctx),
        ("distinct names, no context", distinct),
    ):
        fresh = DictionaryNormalizer.from_dir(args.vocab)
        clear_caches()  # no help from the accuracy pass above
        t0 = time.perf_counter()
        for row in batch:
            fresh.normalize(*row)
        dt = time.perf_counter() - t0
        print(
            f"speed {label}: {len(batch) / dt:,.0f} normalisations/s ({len(batch)} in {dt:.2f} s)"
        )


if __name__ == "__main__":
    main()
