"""How the names stage 1 writes are grounded with PubTator3's annotations of the same paper:
by PubTator3, by the dictionaries, or not at all, and how often right against the gold.

Offline (the default), the BioRED training documents are served by the fake PubTator3 server
(``fastbmrag/testing/fake_pubtator.py``) from BioRED's own annotations, ASCII-folded as
PubTator3 writes them: this measures the mechanism (finding the annotation of a name in the
sentences the relation cites, folding, head words, id mapping, the fallback), not PubTator3's
accuracy, since the annotations served are the gold. The real figure needs NCBI's replies:

    python scripts/bench_pubtator.py --capture pmids.txt replies.json   # with internet
    python scripts/bench_pubtator.py --replay replies.json Train.PubTator   # offline after

Two kinds of names, each end grounded exactly as ``update`` grounds it
(:func:`fastbmrag.index.edges.name_ends`):

* **gold names**: every distinct gene, disease and chemical mention text of a document, as a
  model would write it, citing the sentence it stands in;
* **model names**: the names the test-suite's model (``pipeline_responder``) drafts, scored
  where the gold annotates that text with that type in the document.

A name is right when its id is one of the gold ids (a gold NCBI Gene id counts as the HGNC id it
cross-references, as a PubTator3 gene id does), wrong when it is another id, none without one.
The dictionaries alone (``--no-pubtator``) are scored beside it on the same names. Each figure
is given overall, per entity type and per source of the id (``pubtator``, ``dictionary``,
``none``), so that a rule's effect can be read where it acts.

Usage::

    python scripts/bench_pubtator.py [--biored PATH] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from corpora import BIORED_TYPES, SHARED, Doc, read_pubtator

from fastbmrag.index.edges import name_ends
from fastbmrag.index.extract import Draft, resolve_draft
from fastbmrag.index.grounding import PaperGrounding, fold, resolve
from fastbmrag.papers.pubtator import (
    MAX_IDS,
    Annotation,
    AnnotationCache,
    Document,
    PubTatorClient,
    PubTatorSettings,
    Request,
    parse_documents,
)
from fastbmrag.prompts import extract_messages
from fastbmrag.testing.fake_pubtator import FakePubTator
from fastbmrag.testing.responders import pipeline_responder
from fastbmrag.text.sentences import Sentence, abstract_sentences
from fastbmrag.vocab import load_normalizer

BIORED = SHARED / "biored" / "Train.PubTator"
PUBTATOR3_TYPES = {"gene": "Gene", "disease": "Disease", "chemical": "Chemical"}


def gold_ids(doc: Doc, normalizer: Any) -> dict[tuple[str, str], set[str]]:
    """(folded text, type) -> the gold ids, in this project's id space."""
    out: dict[tuple[str, str], set[str]] = collections.defaultdict(set)
    for text, kind, ids in doc.mentions:
        t = BIORED_TYPES.get(kind)
        if t is None:
            continue
        for i in ids:
            ident = f"MESH:{i}" if t != "gene" and i[:1] in "CD" else i
            norm = resolve(Annotation(t, ident, text, 0, "abstract"), normalizer)
            if norm is not None and norm.ontology_id:
                out[(fold(text), t)].add(norm.ontology_id)
    return out


def gold_names(doc: Doc, sentences: list[Sentence]) -> list[tuple[str, str, list[Sentence]]]:
    """Each distinct mention text and type, with the sentence of its first occurrence."""
    seen: dict[tuple[str, str], list[Sentence]] = {}
    title_len = len(doc.title)
    for start, _, text, kind, _ in doc.spans:
        t = BIORED_TYPES.get(kind)
        if t is None or (text, t) in seen:
            continue
        where, at = ("title", start) if start < title_len else ("abstract", start - title_len - 1)
        seen[(text, t)] = [s for s in sentences if s.where == where and s.start <= at < s.end][:1]
    return [(text, t, cited) for (text, t), cited in seen.items()]


def model_names(sentences: list[Sentence]) -> list[tuple[str, str, list[Sentence]]]:
    """The names the test-suite's model drafts, each with the sentences its relation cites."""
    request = {"messages": extract_messages([s.text for s in sentences]),
               "format": Draft.model_json_schema()}  # fmt: skip
    answer = pipeline_responder(request)
    if not answer:
        return []
    relations, _ = resolve_draft(Draft.model_validate(answer), sentences)
    out: dict[tuple[str, str], list[Sentence]] = {}
    for r in relations:
        for name, t in ((r.src, r.src_type), (r.tgt, r.tgt_type)):
            out.setdefault((name, t), list(r.cited))
    return [(name, t, cited) for (name, t), cited in out.items()]


def score(
    docs: list[Doc], served: dict[str, Document | None], normalizer: Any
) -> dict[str, dict[str, dict[str, int]]]:
    """names kind -> "pubtator on" / "dictionaries only" -> grounding:outcome -> count."""
    tally: dict[str, dict[str, collections.Counter[str]]] = {
        kind: {"pubtator on": collections.Counter(), "dictionaries only": collections.Counter()}
        for kind in ("gold names", "model names")
    }
    for doc in docs:
        sentences = abstract_sentences(doc.title, doc.abstract)
        context = f"{doc.title}\n{doc.abstract}"
        gold = gold_ids(doc, normalizer)
        annotated = served.get(doc.pmid)
        grounding = PaperGrounding(annotated, normalizer) if annotated is not None else None
        for kind, names in (("gold names", gold_names(doc, sentences)),
                            ("model names", model_names(sentences))):  # fmt: skip
            for name, t, cited in names:
                want = gold.get((fold(name), t))
                if want is None:
                    tally[kind]["pubtator on"]["unscored"] += 1
                    continue
                for mode, paper in (("pubtator on", grounding), ("dictionaries only", None)):
                    end = name_ends(normalizer, name, t, context, paper, cited)[0]
                    oid = end.norm.ontology_id
                    outcome = "none" if not oid else "right" if oid in want else "wrong"
                    tally[kind][mode][f"{t}:{end.grounding}:{outcome}"] += 1
    return {k: {m: dict(sorted(c.items())) for m, c in v.items()} for k, v in tally.items()}


def _rates(counts: dict[str, int]) -> dict[str, Any]:
    """names, and right / wrong / none as fractions of them."""
    n = sum(counts.values())
    outcome = collections.Counter()
    for key, v in counts.items():
        outcome[key.rsplit(":", 1)[1]] += v
    return {"names": n, **{o: round(outcome[o] / n, 4) if n else None
                           for o in ("right", "wrong", "none")}}  # fmt: skip


def summary(tally: dict[str, dict[str, dict[str, int]]]) -> dict[str, Any]:
    """Per names kind and mode: right / wrong / none overall, per entity type and per source of
    the id (pubtator, dictionary, none), with the counts by type:source:outcome."""
    out: dict[str, Any] = {}
    for kind, modes in tally.items():
        out[kind] = {}
        for mode, counts in modes.items():
            scored = {k: v for k, v in counts.items() if k != "unscored"}
            by_type: dict[str, dict[str, int]] = collections.defaultdict(dict)
            by_source: dict[str, dict[str, int]] = collections.defaultdict(dict)
            for key, v in scored.items():
                t, source, _ = key.split(":")
                by_type[t][key] = v
                by_source[source][key] = v
            out[kind][mode] = {
                **_rates(scored),
                "by type": {t: _rates(c) for t, c in sorted(by_type.items())},
                "by source": {s: _rates(c) for s, c in sorted(by_source.items())},
                "detail": scored,
            }
    return out


def _line(r: dict[str, Any]) -> str:
    return f"{r['names']:6,} names: right {r['right']}, wrong {r['wrong']}, none {r['none']}"


def capture(pmids_file: Path, out: Path) -> int:
    """NCBI's replies for these PMIDs, as sent, saved as one JSON list (needs the internet)."""
    pmids = [p for p in pmids_file.read_text().replace(",", "\n").split() if p.isdigit()]
    replies = []
    with PubTatorClient(PubTatorSettings.resolve()) as client:
        for i in range(0, len(pmids), MAX_IDS):
            replies.append(json.loads(client.reply("pmid", pmids[i : i + MAX_IDS])))
    out.write_text(json.dumps(replies), encoding="utf-8")
    print(f"{len(pmids):,} PMIDs, {len(replies):,} replies saved to {out}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--biored", type=Path, default=BIORED, help="BioRED PubTator file")
    ap.add_argument("--limit", type=int, default=None, help="the first N documents only")
    ap.add_argument("--capture", nargs=2, type=Path, metavar=("PMIDS", "FILE"))
    ap.add_argument("--replay", nargs=2, type=Path, metavar=("FILE", "GOLD"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.capture:
        return capture(*args.capture)
    gold_file = args.replay[1] if args.replay else args.biored
    if not gold_file.exists():
        print(f"{gold_file} not found: give its place with --biored", file=sys.stderr)
        return 2
    docs = read_pubtator(gold_file)[: args.limit]
    normalizer = load_normalizer()
    requests = 0
    if args.replay:
        replies = json.loads(args.replay[0].read_text(encoding="utf-8"))
        found = [d for r in (replies if isinstance(replies, list) else [replies])
                 for d in parse_documents(r)]  # fmt: skip
        served: dict[str, Document | None] = {d.pmid: d for d in found}
        where = f"NCBI's replies saved in {args.replay[0]}"
    else:
        with FakePubTator(gold_file) as fake, tempfile.TemporaryDirectory() as tmp:
            cache = AnnotationCache(Path(tmp) / "cache.sqlite")
            with PubTatorClient(PubTatorSettings(url=fake.url), cache) as client:
                got = client.documents([Request("pmid", d.pmid) for d in docs])
                client.documents([Request("pmid", d.pmid) for d in docs])  # a re-run
            served = {key.split(":")[1]: doc for key, doc in got.items()}
            requests = fake.count()
        where = "the fake PubTator3 server (BioRED's own annotations, ASCII-folded)"
    result = {
        "documents": len(docs),
        "annotations from": where,
        "requests": requests,
        **summary(score(docs, served, normalizer)),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{len(docs):,} documents; annotations from {where}; {requests:,} requests "
              "(a re-run: none)")  # fmt: skip
        for kind in ("gold names", "model names"):
            for mode, s in result[kind].items():
                print(f"{kind:12} {mode:18} {_line(s)}")
                for part in ("by type", "by source"):
                    for key, r in s[part].items():
                        print(f"{'':12}   {part} {key:12} {_line(r)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
