"""Train the model that tells a relation the paper restates as known (background) from its own
finding (:mod:`fastbmrag.text.novelty`), on BioRED Train's even PMIDs, reproducibly: the same
data and seed give the same model file, byte for byte.

The threshold is chosen on the training half alone, from 5-fold out-of-fold probabilities (folds
by paper): the lowest probability at which background precision reaches ``--precision``
(0.78), so that the odd PMIDs, never seen, judge it (``scripts/bench_novelty.py``). Writes
``fastbmrag/data/findings/model.txt`` (LightGBM's text model) and ``model.json`` (the threshold,
the features, the parameters and the out-of-fold figures).

    pip install -e ".[findings]"
    python scripts/train_findings.py [BIORED_TRAIN.PubTator] [--precision 0.78]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import lightgbm
import numpy as np
from corpora import SHARED, marked_papers

from fastbmrag.text.novelty import CARD_FILE, FEATURES, MODEL_FILE, features

BIORED = SHARED / "biored" / "Train.PubTator"
SEED = 7
PARAMS = {
    "objective": "binary", "learning_rate": 0.03, "num_leaves": 7, "min_data_in_leaf": 20,
    "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0,
    "seed": SEED, "deterministic": True, "force_row_wise": True, "num_threads": 1,
    "verbosity": -1,
}  # fmt: skip
ROUNDS = 300
FOLDS = 5


def table(path: Path, half: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels (1: background) and paper numbers of the papers whose PMID % 2 is
    ``half``."""
    rows, labels, papers = [], [], []
    for n, paper in enumerate(p for p in marked_papers(path) if int(p.pmid) % 2 == half):
        for row, gold in zip(features(paper.sentences, paper.pairs), paper.gold, strict=True):
            rows.append(row)
            labels.append(int(gold == "background"))
            papers.append(n)
    return np.asarray(rows, dtype=np.float64), np.asarray(labels), np.asarray(papers)


def fit(x: np.ndarray, y: np.ndarray) -> lightgbm.Booster:
    data = lightgbm.Dataset(x, y, feature_name=list(FEATURES), free_raw_data=False)
    return lightgbm.train(PARAMS, data, num_boost_round=ROUNDS)


def threshold(probs: np.ndarray, y: np.ndarray, precision: float) -> tuple[float, dict]:
    """The lowest probability at which background precision is at least ``precision``."""
    best = (1.0, {"precision": 0.0, "recall": 0.0})
    for t in np.unique(np.round(probs, 3))[::-1]:
        said = probs >= t
        if not said.any():
            continue
        p = float((y[said] == 1).mean())
        r = float(said[y == 1].mean())
        if p >= precision:
            best = (float(t), {"precision": round(p, 3), "recall": round(r, 3)})
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("biored", type=Path, nargs="?", default=BIORED)
    ap.add_argument("--precision", type=float, default=0.78)
    ap.add_argument("--out", type=Path, default=MODEL_FILE.parent)
    args = ap.parse_args(argv)
    if not args.biored.is_file():
        print(f"{args.biored} not found: give BioRED's Train.PubTator", file=sys.stderr)
        return 2
    x, y, papers = table(args.biored, 0)
    folds = papers % FOLDS
    oof = np.zeros(len(y))
    for k in range(FOLDS):
        model = fit(x[folds != k], y[folds != k])
        oof[folds == k] = model.predict(x[folds == k])
    cut, figures = threshold(oof, y, args.precision)
    model = fit(x, y)
    args.out.mkdir(parents=True, exist_ok=True)
    text = model.model_to_string()
    (args.out / MODEL_FILE.name).write_text(text, encoding="utf-8")
    card = {
        "threshold": cut,
        "trained_on": f"BioRED Train, even PMIDs ({len(set(papers.tolist()))} papers, "
                      f"{len(y)} relations, {int(y.sum())} background)",
        "out_of_fold": figures,
        "params": PARAMS, "rounds": ROUNDS,
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "features": list(FEATURES),
    }  # fmt: skip
    (args.out / CARD_FILE.name).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: card[k] for k in ("threshold", "trained_on", "out_of_fold", "sha256")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
