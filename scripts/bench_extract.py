"""Extraction quality of a real model: stage 1 over BioRED's annotated abstracts.

For users with a GPU: it needs a model server (Ollama, or an OpenAI-compatible one) with the
model pulled. Each abstract goes through the real stage 1 (the draft prompt, the model, the
salvaging validation, the cited sentences) and the real normaliser; the relations become
(source id, target id) pairs and are compared with BioRED's gold relations, as unordered pairs
(BioRED's relations are undirected). BioRED has abstracts only, so there is no stage 2 here;
stage 2 rewrites descriptions and does not change which pairs a paper has.

Gold: relations between genes (NCBI Gene ids, compared through NCBI Gene's cross-reference to
HGNC, ``--gene-info``), diseases and chemicals (MeSH descriptor ids). Pairs with a variant,
species or cell line, or whose ids have no HGNC/MeSH descriptor equivalent, are left out of
the gold set and counted.

Reports, overall and by relation type: precision (over the predicted pairs, by the type the
model gave), recall (over the gold pairs, by BioRED's type) and F1 of pairs; for the predicted
pairs that are gold pairs with BioRED's novelty mark, how well each relation's role (the
paper's own finding or background, :mod:`fastbmrag.text.findings`: the text, else the model's
mark) matches it: the background class's precision and recall, overall and by where the role
came from; chat calls and prompt / completion tokens per paper.

    python scripts/bench_extract.py --model qwen2.5:14b [--host http://gpu01:11434] [--limit 100]
    python scripts/bench_extract.py --backend openai --host http://gpu01:8000/v1 --model M

Defaults read ../shared/data (BioRED Train.PubTator, NCBI Gene's human gene_info).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
from pathlib import Path
from typing import Any

from corpora import SHARED, Doc, read_gene_xrefs, read_pubtator

GOLD_TYPES = {"GeneOrGeneProduct", "DiseaseOrPhenotypicFeature", "ChemicalEntity"}


Gold = dict[frozenset[str], tuple[str, str]]  # pair -> (BioRED type, novelty mark or "")
Pred = dict[frozenset[str], tuple[str, str, str]]  # pair -> (type, finding, finding_from)


def gold_pairs(doc: Doc, genes: dict[str, str]) -> tuple[Gold, int]:
    """{unordered pair of HGNC/MeSH ids: (BioRED type, novelty mark)} and how many relations
    were left out."""
    pairs: Gold = {}
    left_out = 0
    for rtype, a, b in doc.relations:
        ids = []
        for eid in (a, b):
            kind = doc.entity_types.get(eid)
            if kind == "GeneOrGeneProduct" and eid in genes:
                ids.append(genes[eid])
            elif kind in GOLD_TYPES and kind != "GeneOrGeneProduct" and eid.startswith("D"):
                ids.append(eid)
        if len(ids) == 2 and ids[0] != ids[1]:
            pairs[frozenset(ids)] = (rtype, doc.novelty.get((a, b), ""))
        else:
            left_out += 1
    return pairs, left_out


async def predict(docs: list[Doc], llm: Any, normalizer: Any) -> list[Pred]:
    from fastbmrag.index import build_edges
    from fastbmrag.index.extract import draft_relations, resolve_draft
    from fastbmrag.papers import Paper
    from fastbmrag.text.sentences import abstract_sentences

    async def one(doc: Doc) -> Pred:
        sentences = abstract_sentences(doc.title, doc.abstract)
        draft = await draft_relations(sentences, llm)
        if draft.value is None:
            print(f"PMID {doc.pmid}: {draft.error}", file=sys.stderr)
            return {}
        relations, _ = resolve_draft(draft.value, sentences)
        paper = Paper(doc.pmid, title=doc.title, abstract=doc.abstract)
        out: Pred = {}
        for edge in build_edges(paper, relations, normalizer)[0]:
            ids = (edge.source.norm.ontology_id, edge.target.norm.ontology_id)
            r = edge.relation
            if ids[0] and ids[1] and ids[0] != ids[1]:
                out.setdefault(frozenset(ids), (r.rel, r.finding, r.finding_from))
        return out

    try:
        return list(await asyncio.gather(*(one(d) for d in docs)))
    finally:
        await llm.aclose()


def prf(tp: int, predicted: int, gold: int) -> dict[str, float]:
    p = tp / predicted if predicted else 0.0
    r = tp / gold if gold else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "tp": tp, "predicted": predicted, "gold": gold}  # fmt: skip


def roles(golds: list[Gold], preds: list[Pred]) -> dict[str, Any]:
    """The background class's precision and recall over the predicted gold pairs that carry
    a novelty mark, overall and by where the role came from ("classifier": the findings model;
    "text", "model", "": neither)."""
    rows = [(mark == "No", said[1] == "background", said[2])
            for g, p in zip(golds, preds, strict=True)
            for pair, (_, mark) in g.items() if mark and (said := p.get(pair))]  # fmt: skip

    def of(kept: list[tuple[bool, bool, str]]) -> dict[str, Any]:
        out = prf(sum(g and s for g, s, _ in kept), sum(s for _, s, _ in kept),
                  sum(g for g, _, _ in kept))  # fmt: skip
        return {"relations": len(kept), **out}

    by_from = {w or "neither": of([r for r in rows if r[2] == w])
               for w in ("classifier", "text", "model", "")}  # fmt: skip
    return {"background": {"overall": of(rows), **by_from}}


def score(golds: list[Gold], preds: list[Pred]) -> dict[str, Any]:
    tp = sum(len(g.keys() & p.keys()) for g, p in zip(golds, preds, strict=True))
    by_gold: collections.Counter[str] = collections.Counter()
    hit_gold: collections.Counter[str] = collections.Counter()
    by_pred: collections.Counter[str] = collections.Counter()
    hit_pred: collections.Counter[str] = collections.Counter()
    for g, p in zip(golds, preds, strict=True):
        for pair, (t, _) in g.items():
            by_gold[t] += 1
            hit_gold[t] += pair in p
        for pair, (t, _, _) in p.items():
            by_pred[t] += 1
            hit_pred[t] += pair in g
    return {
        "overall": prf(tp, sum(map(len, preds)), sum(map(len, golds))),
        "recall_by_gold_type": {t: round(hit_gold[t] / n, 4) for t, n in by_gold.most_common()},
        "precision_by_predicted_type": {t: round(hit_pred[t] / n, 4) for t, n in by_pred.most_common()},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", required=True, help="chat model, e.g. qwen2.5:14b")
    ap.add_argument("--host", help="Ollama host or OpenAI-compatible base URL")
    ap.add_argument("--backend", choices=("ollama", "openai"), default="ollama")
    ap.add_argument("--limit", type=int, help="only the first N abstracts")
    ap.add_argument("--concurrency", type=int, default=4, help="requests in flight")
    ap.add_argument("--biored", type=Path, default=SHARED / "biored" / "Train.PubTator")
    ap.add_argument(
        "--gene-info", type=Path, default=SHARED / "ncbi_gene" / "Homo_sapiens.gene_info.gz"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    from fastbmrag.errors import FastbmragError
    from fastbmrag.llm import make_llm
    from fastbmrag.vocab import load_normalizer

    for path in (args.biored, args.gene_info):
        if not path.exists():
            print(
                f"Error: {path} not found: give its place with --biored / --gene-info",
                file=sys.stderr,
            )
            return 2
    docs = read_pubtator(args.biored)[: args.limit]
    genes = read_gene_xrefs(args.gene_info)
    golds, left_out = zip(*(gold_pairs(d, genes) for d in docs), strict=True)
    llm = make_llm(args.backend, host=args.host, model=args.model, concurrency=args.concurrency)
    try:
        preds = asyncio.run(predict(docs, llm, load_normalizer()))
    except FastbmragError as err:
        print(f"Error: {err}", file=sys.stderr)
        return 2
    usage = llm.accounting.to_dict().get("extract", {})
    n = len(docs)
    out = {
        "model": args.model,
        "papers": n,
        "gold_relations_left_out": sum(left_out),
        **score(list(golds), preds),
        **roles(list(golds), preds),
        "chat_calls_per_paper": round(usage.get("calls", 0) / n, 3),
        "prompt_tokens_per_paper": round(usage.get("prompt_tokens", 0) / n, 1),
        "completion_tokens_per_paper": round(usage.get("completion_tokens", 0) / n, 1),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:30} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
