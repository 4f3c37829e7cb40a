"""A paper's own findings told from what it restates, against BioRED's novelty marks: each
relation of a BioRED PubTator file is marked ``Novel`` (the paper's own finding) or ``No``
(background); the sentences that state it are those of the title and abstract (split as the
project splits them) that name both of its ends.

Three ways of telling, side by side:

* **classifier**: the shipped model (:mod:`fastbmrag.text.novelty`, its threshold as declared
  with it; needs ``lightgbm``), trained on BioRED Train's even PMIDs;
* **rules**: the text's cues alone (:mod:`fastbmrag.text.findings`, the path that needs no
  model), a relation they leave undecided counting as a finding, as it is stored;
* **all findings**: every relation called a finding (the baseline).

Reported for each: the background class's precision and recall and the accuracy, for the
relations of even PMIDs (the classifier's training half), odd PMIDs (held out) and all; and the
classifier's cost per paper (features and prediction, CPU ms). With ``--json``, the last line is
``{"classifier": {...}, "rules": {...}, "all_findings": {...}}`` for the held-out half of Train
(``--all`` for every relation: a file of papers the model never saw, such as BioRED's Test).

    python scripts/bench_novelty.py [BIORED.PubTator] [--json] [--all] [--threshold T]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from corpora import SHARED, MarkedPaper, marked_papers

from fastbmrag.text.findings import (
    BACKGROUND,
    FINDING,
    named_as_known,
    relation_role,
    sentence_roles,
)
from fastbmrag.text.novelty import load_model

BIORED = SHARED / "biored" / "Train.PubTator"


def rules(paper: MarkedPaper) -> list[str]:
    """The text's call for each relation of ``paper``."""
    roles = sentence_roles(paper.sentences)
    out = []
    for pair in paper.pairs:
        said = [BACKGROUND if any(named_as_known(paper.sentences[i].text, a, b)
                                  for a in pair.src for b in pair.tgt)
                else roles[i] for i in pair.cited]  # fmt: skip
        out.append(relation_role(said)[0])
    return out


def score(gold: list[str], said: list[str]) -> dict[str, Any]:
    tp = sum(g == BACKGROUND and s == BACKGROUND for g, s in zip(gold, said, strict=True))
    called = sum(s == BACKGROUND for s in said)
    real = sum(g == BACKGROUND for g in gold)
    return {
        "relations": len(gold),
        "background": {"precision": round(tp / called, 3) if called else 0.0,
                       "recall": round(tp / real, 3) if real else 0.0},  # fmt: skip
        "accuracy": round(sum(g == s for g, s in zip(gold, said, strict=True)) / len(gold), 3)
        if gold else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("biored", type=Path, nargs="?", default=BIORED)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--all", action="store_true", help="the --json line for every relation")
    ap.add_argument("--threshold", type=float, help="the classifier's, instead of the model's")
    args = ap.parse_args(argv)
    if not args.biored.is_file():
        print(f"{args.biored} not found: give a BioRED PubTator file", file=sys.stderr)
        return 2
    model = load_model()
    if model is None:
        print("the classifier needs lightgbm: pip install -e '.[findings]'", file=sys.stderr)
        return 2
    cut = args.threshold if args.threshold is not None else model.threshold
    papers = marked_papers(args.biored)
    calls: dict[str, dict[str, list[str]]] = {"classifier": {}, "rules": {}, "all_findings": {}}
    started = time.process_time()
    for p in papers:
        probs = model.probabilities(p.sentences, p.pairs)
        calls["classifier"][p.pmid] = [BACKGROUND if q >= cut else FINDING for q in probs]
    cost = (time.process_time() - started) * 1000 / max(len(papers), 1)
    for p in papers:
        calls["rules"][p.pmid] = rules(p)
        calls["all_findings"][p.pmid] = [FINDING] * len(p.pairs)
    halves = {"even PMIDs (training)": 0, "odd PMIDs (held out)": 1, "all": None}
    out = sys.stderr if args.json else sys.stdout
    print(f"threshold {cut:g}; classifier cost {cost:.1f} ms CPU per paper", file=out)
    last: dict[str, Any] = {}
    for name, half in halves.items():
        chosen = [p for p in papers if half is None or int(p.pmid) % 2 == half]
        gold = [g for p in chosen for g in p.gold]
        for way, said in calls.items():
            s = score(gold, [c for p in chosen for c in said[p.pmid]])
            print(f"{name:24s} {way:12s} {json.dumps(s)}", file=out)
            if half == (None if args.all else 1):
                last[way] = s
    if args.json:
        print(json.dumps(last))
    return 0


if __name__ == "__main__":
    sys.exit(main())
