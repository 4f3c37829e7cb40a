"""Precision and recall of the mention finder a query uses (``normalize --find``), on titles.

Titles read like questions, and the corpora annotate them: each title goes through the finder
alone (no abstract, no collection), and the ids it links are scored against the gold ids of the
mentions annotated inside the title.

Sets: BC5CDR's Training split and BioRED-even (training documents with an even PMID) are the
tuning half; BC5CDR's Development and Test splits together and BioRED-odd are held out. A corpus
scores only the types it annotates (BC5CDR: disease, chemical; BioRED: gene, disease, chemical).
A gene's NCBI Gene id is compared through NCBI Gene's cross-reference to HGNC.

Per set and type:

* **precision**: linked ids that are a gold id of the title / linked ids scored. A link that
  overlaps a gold mention with no scorable id (gold "-1", a supplementary concept or OMIM id,
  a gene of another species) is not scored, nor a gene family's node (an HGNC gene group), nor
  a type the corpus does not annotate.
* **recall**: gold concepts of the title (distinct gold id sets) of which an id was linked.

Speed: milliseconds per title, in-process, warm normaliser (median and p95 over every title of
the sets run), the figure a question pays on every query.

Usage::

    python scripts/bench_link.py [--set Training --set BioRED-odd] [--errors 30] [--kinds]

``--kinds`` adds, per set, each ``matched_by``'s links, right and wrong.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from pathlib import Path

from corpora import BIORED_TYPES, SHARED, Doc, read_gene_xrefs, read_pubtator

from fastbmrag.vocab.building.sources import GROUP_PREFIX
from fastbmrag.vocab.loading import load_normalizer

TUNE = ("Training", "BioRED-even")
HELD_OUT = ("Development+Test", "BioRED-odd")
SETS = TUNE + HELD_OUT
TYPES = ("gene", "disease", "chemical")
BC5CDR_TYPES = {"Disease": "disease", "Chemical": "chemical"}


def load_set(name: str) -> tuple[list[Doc], dict[str, str], dict[str, str] | None]:
    """The documents of a set, the corpus's type names, and NCBI Gene -> HGNC (BioRED)."""
    if name.startswith("BioRED"):
        docs = read_pubtator(SHARED / "biored" / "Train.PubTator")
        parity = 0 if name.endswith("even") else 1
        genes = read_gene_xrefs(SHARED / "ncbi_gene" / "Homo_sapiens.gene_info.gz")
        return [d for d in docs if int(d.pmid) % 2 == parity], BIORED_TYPES, genes
    parts = name.split("+")
    docs = [
        d
        for part in parts
        for d in read_pubtator(SHARED / "bc5cdr" / f"CDR_{part}Set.PubTator.txt")
    ]
    return docs, BC5CDR_TYPES, None


def gold_of(
    doc: Doc, kinds: dict[str, str], genes: dict[str, str] | None
) -> tuple[list[tuple[str, frozenset[str]]], list[tuple[int, int]]]:
    """The title's scorable gold concepts (type, ids) and the spans of its unscorable mentions."""
    scored: list[tuple[str, frozenset[str]]] = []
    unscored: list[tuple[int, int]] = []
    for start, end, _text, kind, ids in doc.spans:
        t = kinds.get(kind)
        if t is None or end > len(doc.title):
            continue
        if t == "gene":
            good = frozenset(genes[i] for i in ids if genes and i in genes)
        else:
            good = frozenset(i.removeprefix("MESH:") for i in ids)
            good = frozenset(i for i in good if i[:1] == "D" and i[1:].isdigit())
        if good:
            scored.append((t, good))
        else:
            unscored.append((start, end))
    return list(dict.fromkeys(scored)), unscored


def score(name: str, norm, args: argparse.Namespace, times: list[float]) -> None:
    docs, kinds, genes = load_set(name)
    types = tuple(dict.fromkeys(kinds.values()))
    right: collections.Counter[str] = collections.Counter()
    wrong: collections.Counter[str] = collections.Counter()
    found: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    by_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    errors: list[str] = []
    for doc in docs:
        gold, unscored = gold_of(doc, kinds, genes)
        gold_ids = {i for _t, ids in gold for i in ids}
        t0 = time.perf_counter()
        spans = norm.find_mention_spans(doc.title, TYPES)
        times.append(time.perf_counter() - t0)
        linked: set[str] = set()
        for start, end, m in spans:
            ids = [p.ontology_id for p in m.parts] if m.parts else [m.ontology_id]
            for i in ids:
                if not i or i.startswith(GROUP_PREFIX):
                    continue
                linked.add(i)
                if m.type not in types or any(s < end and start < e for s, e in unscored):
                    continue
                ok = i in gold_ids
                (right if ok else wrong)[m.type] += 1
                by_kind[m.matched_by]["right" if ok else "wrong"] += 1
                if not ok:
                    errors.append(
                        f"  wrong {m.type:8} {doc.title[start:end]!r} -> {i} "
                        f"{m.normalized_name} ({m.matched_by})"
                    )
        for t, ids in gold:
            total[t] += 1
            if ids & linked:
                found[t] += 1
            else:
                errors.append(f"  missed {t:7} {sorted(ids)} in {doc.title!r}")
    print(f"{name}: {len(docs)} titles")
    for t in types:
        linked_n = right[t] + wrong[t]
        p = right[t] / linked_n if linked_n else float("nan")
        r = found[t] / total[t] if total[t] else float("nan")
        print(
            f"  {t:9} precision {p:.3f} ({right[t]}/{linked_n})   "
            f"recall {r:.3f} ({found[t]}/{total[t]})"
        )
    if args.kinds:
        for kind, c in sorted(by_kind.items(), key=lambda kv: -sum(kv[1].values())):
            print(f"    {kind:14} right {c['right']:5}  wrong {c['wrong']:4}")
    if args.errors:
        for line in errors[: args.errors]:
            print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--set", action="append", choices=SETS, help="default: every set")
    ap.add_argument("--errors", type=int, default=0, help="print this many wrong and missed")
    ap.add_argument("--kinds", action="store_true", help="links per matched_by")
    ap.add_argument("--vocab", type=Path, default=None, help="another build of the vocabularies")
    args = ap.parse_args()
    norm = load_normalizer(args.vocab) if args.vocab else load_normalizer()
    times: list[float] = []
    for name in args.set or SETS:
        score(name, norm, args, times)
    ms = sorted(t * 1000 for t in times)
    print(
        f"speed: {statistics.median(ms):.2f} ms per title median, "
        f"{ms[int(len(ms) * 0.95)]:.2f} ms p95, {len(ms)} titles (warm normaliser)"
    )


if __name__ == "__main__":
    main()
