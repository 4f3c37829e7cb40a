"""A paper's own findings told from what it restates, from the text alone, against BioRED's
novelty marks: each relation of a BioRED PubTator file is marked ``Novel`` (the paper's own
finding) or ``No`` (background); its cited sentences are the sentences of the title and
abstract (split as the project splits them) that name both of its ends. The project decides
finding or background from those sentences and the names they write of its ends
(:mod:`fastbmrag.text.findings`, the path that needs no model); a relation the text leaves undecided counts as a finding, as it is stored.

Reported: the background class's precision and recall and the accuracy, for the relations of
even PMIDs (tuning), odd PMIDs (held out) and all; with ``--json``, the last line is
``{"relations": N, "background": {"precision": P, "recall": R}, "accuracy": A}`` for all of them.

    python scripts/bench_novelty.py [BIORED.PubTator] [--json] [--errors N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from corpora import SHARED, read_pubtator

from fastbmrag.text.findings import (
    BACKGROUND,
    FINDING,
    named_as_known,
    relation_role,
    sentence_roles,
)
from fastbmrag.text.sentences import abstract_sentences

BIORED = SHARED / "biored" / "Train.PubTator"


def relations(path: Path) -> list[dict[str, Any]]:
    """Every relation with a novelty mark, with its cited sentences and the project's role."""
    out: list[dict[str, Any]] = []
    marks: dict[str, list[tuple[str, str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) == 5 and parts[4] in ("Novel", "No"):
            marks.setdefault(parts[0], []).append((parts[2], parts[3], parts[4]))
    for doc in read_pubtator(path):
        sentences = abstract_sentences(doc.title, doc.abstract)
        roles = sentence_roles(sentences)
        offset = len(doc.title) + 1  # the abstract's first character in PubTator's offsets
        spans = [(s.start, s.end) if s.where == "title" else (s.start + offset, s.end + offset)
                 for s in sentences]  # fmt: skip
        ids_in = [set() for _ in sentences]  # type: list[set[str]]
        written: list[dict[str, set[str]]] = [{} for _ in sentences]  # id -> names as written
        for start, _end, text, _kind, ids in doc.spans:
            for i, (a, b) in enumerate(spans):
                if a <= start < b:
                    ids_in[i].update(ids)
                    for one in ids:
                        written[i].setdefault(one, set()).add(text)
        for one, two, mark in marks.get(doc.pmid, []):
            cited = [i for i, held in enumerate(ids_in) if one in held and two in held]
            said = [BACKGROUND if any(named_as_known(sentences[i].text, x, y)
                                      for x in written[i][one] for y in written[i][two])
                    else roles[i] for i in cited]  # fmt: skip
            role, _ = relation_role(said)
            out.append({
                "pmid": doc.pmid, "gold": BACKGROUND if mark == "No" else FINDING,
                "said": role, "sentences": [sentences[i].text for i in cited],
            })  # fmt: skip
    return out


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    tp = sum(r["gold"] == BACKGROUND and r["said"] == BACKGROUND for r in rows)
    said = sum(r["said"] == BACKGROUND for r in rows)
    gold = sum(r["gold"] == BACKGROUND for r in rows)
    right = sum(r["gold"] == r["said"] for r in rows)
    return {
        "relations": len(rows),
        "background": {"precision": round(tp / said, 3) if said else 0.0,
                       "recall": round(tp / gold, 3) if gold else 0.0},  # fmt: skip
        "accuracy": round(right / len(rows), 3) if rows else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("biored", type=Path, nargs="?", default=BIORED)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--errors", type=int, default=0, help="print N relations called wrongly")
    args = ap.parse_args(argv)
    if not args.biored.is_file():
        print(f"{args.biored} not found: give BioRED's Train.PubTator", file=sys.stderr)
        return 2
    rows = relations(args.biored)
    halves = {
        "tuning (even PMIDs)": score([r for r in rows if int(r["pmid"]) % 2 == 0]),
        "held out (odd PMIDs)": score([r for r in rows if int(r["pmid"]) % 2 == 1]),
    }
    every = score(rows)
    for name, s in halves.items():
        print(f"{name}: {json.dumps(s)}", file=sys.stderr if args.json else sys.stdout)
    wrong = [r for r in rows if r["gold"] != r["said"]]
    for r in wrong[: args.errors]:
        print(f"{r['gold']:10s} said {r['said']:10s} {r['pmid']} {r['sentences'][:2]}",
              file=sys.stderr)  # fmt: skip
    print(json.dumps(every) if args.json else f"all: {json.dumps(every)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
