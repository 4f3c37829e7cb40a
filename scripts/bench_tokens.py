"""What the model writes and reads per paper, in real tokens: today's formats against earlier ones.

No model runs here. For the real papers in tests/data (PMC full texts and MEDLINE abstracts)
the script renders the answers a careful model gives, then measures the same answers in each
format:

* Stage 1: the genes, diseases and chemicals each abstract sentence names (the normaliser's
  mention finder, and the common words it leaves to the model that are a term's own name or
  entry term; names as written), and one relation per pair named in the same sentence, at
  most 20 per paper, each citing that sentence. Formats: ``arrays`` (today's: each entity and
  relation a JSON array, ``[1, "upregulated_in", 2, [3]]``), ``objects`` (the version before:
  the same items as objects with one-letter keys) and ``v1`` (the first version: names,
  types, a one-sentence draft description, rendered as the cited sentence, and a quote of at
  most 15 words, per relation).
* Stage 2 (papers with main text): chunks chosen as the pipeline does (hashed-word embeddings
  stand in for the model's), and per relation a refined description of ~50 tokens: the chosen
  sentence sharing most words with the relation, citing it. Formats: ``arrays`` (``[1,
  "..."]``), ``objects`` (``{"i": 1, "d": "..."}``), ``v1`` (the description plus a quote of at
  most 20 words).

Measured: completion tokens (``cl100k_base``, a real BPE tokenizer, :mod:`fastbmrag.util.tokens`, of
the JSON as a model writes it, with ", " and ": " spacing) per relation and per paper, and
stage 2's tokens beyond the description per relation; chat prompt tokens per paper with today's
prompt builders and with those of ``--baseline-src`` (a source tree of an earlier version, e.g.
from ``git archive <commit> | tar -x -C /tmp/v1``) fed the same passages and relations; an
estimate of GPU seconds per paper, prompt / ``--prefill`` + completion / ``--decode`` (defaults:
a 14B model on one 4090-class GPU, one stream); and the schemas' longest answer per relation
for names of up to 12 characters. Also the query's parse answer (the fake model server's, a
careful model's answer) for ten questions, with and without the entities it names: the decode
tokens that naming them adds to every query.

    python scripts/bench_tokens.py --baseline-src /tmp/v1 [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
MAX_RELATIONS = 20
SIDES = ("new", "objects", "old")  # today's arrays, the keyed objects before them, version 1
RELATION_FOR = {  # (source type, target type) -> a plausible relationship type
    ("gene", "disease"): "upregulated_in",
    ("chemical", "disease"): "causes",
    ("chemical", "gene"): "upregulates",
    ("gene", "gene"): "regulates",
    ("chemical", "chemical"): "interacts_with",
    ("disease", "disease"): "associated_with",
}


def tokens(text: str) -> float:
    from fastbmrag.util.tokens import count_tokens

    return count_tokens(text)


def written(answer: Any) -> str:
    """An answer as a model writes it (one line, ", " and ": " spacing)."""
    return json.dumps(answer, ensure_ascii=False)


def messages_tokens(messages: list[dict[str, str]]) -> float:
    return sum(tokens(m["content"]) for m in messages)


def words(text: str) -> set[str]:
    return {w.strip(".,;:()[]").casefold() for w in text.split() if len(w) > 3}


def load_prompts(src: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "baseline_prompts", src / "fastbmrag" / "prompts.py"
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"no fastbmrag/prompts.py under {src}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def papers() -> list[Any]:
    from fastbmrag.papers import ReadReport, iter_papers

    report = ReadReport()
    full = sorted((DATA / "pmc").glob("*.nxml")) + sorted((DATA / "eutils").glob("*.nxml"))
    out = list(iter_papers(full, report))
    out += list(iter_papers([DATA / "medline" / "pubmed21n1298_first50.xml.gz"], report))
    return [p for p in out if p.abstract.strip()]


def named_in(text: str, normalizer: Any) -> list[Any]:
    """The names a careful model writes for a sentence: the mention finder's, and the common
    words it leaves to the model (a question's finder reads "cancer" alone as a word, a model
    reading a paper names it), where a word is a term's own name or entry term."""
    import re

    spans = normalizer.find_mention_spans(text)
    for m in re.finditer(r"\w+", text):
        word = m.group(0)
        if word.lower() not in normalizer.common_words:
            continue
        if any(s < m.end() and m.start() < e for s, e, _ in spans):
            continue
        n = normalizer.normalize(word)
        if n.ontology_id and n.matched_by in ("name", "entry_term", "symbol"):
            spans.append((m.start(), m.end(), n))
    return [n for _s, _e, n in sorted(spans, key=lambda x: x[0])]


def draft(paper: Any, normalizer: Any) -> tuple[list[Any], dict[str, Any], list[dict[str, Any]]]:
    """(sentences, the draft answer with keyed objects, version 1's relations) for one paper."""
    from fastbmrag.text.sentences import abstract_sentences

    sentences = abstract_sentences(paper.title, paper.abstract)
    entities: dict[str, dict[str, Any]] = {}
    relations: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for number, sent in enumerate(sentences, 1):
        named: dict[str, Any] = {}
        for m in named_in(sent.text, normalizer):
            named.setdefault(m.ontology_id or m.name.casefold(), m)
        for (ka, a), (kb, b) in itertools.combinations(named.items(), 2):
            if (b.type, a.type) in RELATION_FOR and (a.type, b.type) not in RELATION_FOR:
                (ka, a), (kb, b) = (kb, b), (ka, a)
            rel = RELATION_FOR.get((a.type, b.type), "associated_with")
            if (ka, kb) in seen or ka == kb or len(relations) == MAX_RELATIONS:
                continue
            seen.add((ka, kb))
            for key, m in ((ka, a), (kb, b)):
                entities.setdefault(key, {"i": len(entities) + 1, "n": m.name, "t": m.type})
            # a sentence of the abstract's first third restates what was known (BioRED marks a
            # third of an abstract's relations so): cited as its negative number
            restates = 1 < number <= 1 + (len(sentences) - 1) / 3
            relations.append({"s": entities[ka]["i"], "r": rel, "o": entities[kb]["i"],
                              "c": [-number if restates else number]})  # fmt: skip
    by_number = {e["i"]: e for e in entities.values()}
    old = [
        {"src": by_number[r["s"]]["n"], "src_type": by_number[r["s"]]["t"], "rel": r["r"],
         "tgt": by_number[r["o"]]["n"], "tgt_type": by_number[r["o"]]["t"],
         "desc": sentences[abs(r["c"][0]) - 1].text,
         "ev": " ".join(sentences[abs(r["c"][0]) - 1].text.split()[:15])}
        for r in relations
    ]  # fmt: skip
    return sentences, {"e": list(entities.values()), "r": relations}, old


def measure(items: list[Any], baseline: ModuleType | None) -> dict[str, Any]:
    from fastbmrag.index.refine import chunk_paragraphs, refine_prompt, refine_query, select_chunks
    from fastbmrag.prompts import Draft, extract_messages, relation_statement
    from fastbmrag.testing.answers import hashed_embedding
    from fastbmrag.testing.responders import study_code
    from fastbmrag.vocab import load_normalizer

    normalizer = load_normalizer()
    rows: list[dict[str, Any]] = []
    for paper in items:
        sentences, answer, old = draft(paper, normalizer)
        # the study's code a careful model writes first ("Rh"): what it adds to the decode
        code = {"k": study_code(f"{paper.title} {paper.abstract}")}
        arrays = Draft.model_validate({**code, **answer}).model_dump(mode="json")
        bare = {k: v for k, v in arrays.items() if k != "k"}
        row = {"relations": len(answer["r"]), "refined": 0, "s2_desc": 0.0,
               "s1_study": tokens(written(arrays)) - tokens(written(bare)),
               "s1_new": tokens(written(arrays)), "s1_objects": tokens(written(answer)),
               "s1_old": tokens(written({"r": old})), "s2_new": 0.0, "s2_objects": 0.0,
               "s2_old": 0.0,
               "prompt_new": messages_tokens(extract_messages([s.text for s in sentences])),
               "prompt_old": 0.0}  # fmt: skip
        if baseline is not None:
            row["prompt_old"] = messages_tokens(
                baseline.extract_messages(paper.title, paper.abstract)
            )
        rows.append(row)
        chunks = chunk_paragraphs(paper.paragraphs)
        if not answer["r"] or not chunks:
            continue
        statements = [relation_statement(o["src"], o["rel"], o["tgt"]) for o in old]
        queries = [refine_query(st, o["desc"]) for st, o in zip(statements, old, strict=True)]
        vectors = np.array([hashed_embedding(t, 256) for t in [c.text for c in chunks] + queries])
        selection = select_chunks(vectors[: len(chunks)], vectors[len(chunks) :], 3, 0.1)
        prompt = refine_prompt(paper.title, chunks, selection, queries)
        if prompt is None:
            continue
        refined, refined_old = [], []
        for i in prompt.asked:
            number, sent = max(
                prompt.numbered.items(),
                key=lambda kv: len(words(kv[1].text) & words(old[i]["desc"])),
            )
            text = f"{statements[i]} in {sent.section or 'the main text'}: {sent.text[:160]}"
            refined.append([i + 1, f"{text} [{number}]."])
            refined_old.append(
                {"i": i + 1, "desc": f"{text}.", "ev": " ".join(sent.text.split()[:20])}
            )
            row["s2_desc"] += tokens(f"{text}.")
        row["refined"] = len(refined)
        row["s2_new"] = tokens(written({"r": refined}))
        row["s2_objects"] = tokens(written({"r": [{"i": i, "d": d} for i, d in refined]}))
        row["s2_old"] = tokens(written({"r": refined_old}))
        row["prompt_new"] += messages_tokens(prompt.messages)
        if baseline is not None:
            order = {
                c: n
                for n, c in enumerate(
                    dict.fromkeys(c for i in prompt.asked for c, _ in selection[i]), 1
                )
            }
            row["prompt_old"] += messages_tokens(baseline.refine_messages(
                paper.title,
                [(n, chunks[c].text) for c, n in order.items()],
                [(i + 1, f"{statements[i]}: {old[i]['desc']}", [order[c] for c, _ in selection[i]])
                 for i in prompt.asked],
            ))  # fmt: skip
    return summarise(rows)


def worst_case() -> dict[str, float]:
    """Per-relation tokens of the longest answer the schemas allow for names of 12 characters."""
    from fastbmrag.prompts import ENTITY_TYPES, RELATIONSHIP_TYPES

    entity = written([99, "x" * 12, max(ENTITY_TYPES, key=len)]) + ", "
    relation = written([98, max(RELATIONSHIP_TYPES, key=len), 99, [98, 99]]) + ", "
    return {
        "stage1_relation_only": tokens(relation),
        "stage1_with_one_new_entity": tokens(relation + entity),
        "stage1_with_two_new_entities": tokens(relation + 2 * entity),
        "stage2_overhead_two_citations": tokens(written([99, ""]) + ", " + " [98][99]"),
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from fastbmrag.util.tokens import TOKENIZER

    n = len(rows)
    rels = sum(r["relations"] for r in rows)
    refined = sum(r["refined"] for r in rows)

    def per_paper(key: str) -> float:
        return round(sum(r[key] for r in rows) / n, 1)

    out: dict[str, Any] = {
        "papers": n,
        "papers_with_relations": sum(1 for r in rows if r["relations"]),
        "relations": rels,
        "refined_relations": refined,
        "tokenizer": TOKENIZER,
        "stage1_tokens_per_relation": {
            side: round(sum(r[f"s1_{side}"] for r in rows) / max(rels, 1), 1) for side in SIDES
        },
        "stage1_tokens_per_paper": {side: per_paper(f"s1_{side}") for side in SIDES},
        "stage1_study_code_tokens_per_paper": per_paper("s1_study"),
        "stage2_overhead_tokens_per_relation": {
            side: round(sum(r[f"s2_{side}"] - r["s2_desc"] for r in rows) / max(refined, 1), 1)
            for side in ("new", "objects")
        },
        "completion_tokens_per_paper": {
            side: round(per_paper(f"s1_{side}") + per_paper(f"s2_{side}"), 1) for side in SIDES
        },
        "chat_prompt_tokens_per_paper": {"new": per_paper("prompt_new")},
        "schema_worst_case": {k: round(v, 2) for k, v in worst_case().items()},
    }
    if any(r["prompt_old"] for r in rows):
        old, new = per_paper("prompt_old"), per_paper("prompt_new")
        out["chat_prompt_tokens_per_paper"].update(old=old, growth=round(new / old - 1, 3))
    return out


# Questions for the query's parse call: the fastbmRAG paper's five and questions that name
# absent, ambiguous or no entities.
QUESTIONS = [
    "Which genes are up- or down-regulated in endometriosis?",
    "What pathways contribute to endometriosis?",
    "What mutations contribute to endometriosis?",
    "What is the role of IL1B in endometriosis?",
    "What is the causal mechanism of endometriosis?",
    "What genes are linked to Alzheimer disease?",
    "Which drugs treat type 2 diabetes?",
    "Is IVF associated with preterm birth?",
    "Do mitochondria play a role in programmed cell death?",
    "What is the role of FOOBAR1 in zombies?",
]


def parse_tokens() -> dict[str, Any]:
    """Completion tokens of the query's parse answer, per question, with the entities it names
    (today's) and without them (the answer before): what naming them adds to the decode."""
    from fastbmrag.testing.responders import parse_answer

    answers = [parse_answer(q) for q in QUESTIONS]
    new = [tokens(written(a)) for a in answers]
    old = [tokens(written({k: v for k, v in a.items() if k != "ents"})) for a in answers]
    return {
        "questions": len(QUESTIONS),
        "with_entities": round(sum(new) / len(new), 1),
        "without": round(sum(old) / len(old), 1),
        "added": round((sum(new) - sum(old)) / len(new), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--baseline-src", type=Path, help="source tree of the version to compare with")
    ap.add_argument("--prefill", type=float, default=3000.0, help="prompt tokens/s (default 3000)")
    ap.add_argument("--decode", type=float, default=40.0, help="completion tokens/s (default 40)")
    ap.add_argument("--limit", type=int, help="only the first N papers")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    baseline = load_prompts(args.baseline_src) if args.baseline_src else None
    out = measure(papers()[: args.limit], baseline)
    gpu = {}
    for side in SIDES:  # the keyed objects were read from about today's prompt
        prompt = out["chat_prompt_tokens_per_paper"].get("new" if side == "objects" else side)
        if prompt is not None:
            completion = out["completion_tokens_per_paper"][side]
            gpu[side] = round(prompt / args.prefill + completion / args.decode, 2)
    out["gpu_seconds_per_paper"] = gpu
    out["query_parse_completion_tokens"] = parse_tokens()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:38} {value}")


if __name__ == "__main__":
    main()
