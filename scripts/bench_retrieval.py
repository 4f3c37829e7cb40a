"""Retrieval on real questions: does a question about a paper of the collection find that paper?

PubMedQA's expert-labelled questions (``pqal_train.json``: 500 questions, each written about one
PubMed abstract) are asked of a collection that holds those abstracts. Every 5th PMID (in sorted
order) is held back from the collection, so its question asks about something the collection
may not hold.

Indexing runs against the fake model server with a stand-in reader (:func:`reader_draft`): it
names the noun phrases of each sentence as written, types each by what its words say (a disease
word, a chemical ending, a gene-like symbol, a cell or a process word, else ``other``) and relates
the phrases of one sentence. It reads no vocabulary, normaliser or finder of the project: both
sides would agree by construction. The embeddings are the fake's hashed bags of words, or
(``--embedder minilm``) a real sentence embedding model, all-MiniLM-L6-v2 (``scripts/minilm.py``),
served from the fake's embedding endpoint so the project talks to it as to Ollama.

Every question is asked twice in one run with ``--no-answer``, in-process on one open collection:

* **as understood**: the default query (the question's entities linked, ranked first);
* **plain vector search**: ``--no-link`` and a filter every edge passes (every relationship type), so
  the top edges by similarity alone.

Reported, per half (questions of even PMIDs: tuning; odd: held out) and overall:

* **hit@1/5/10/50 and MRR**: the question's paper among the first k edges returned (the
  reciprocal of the first one's rank, 0 beyond 50), where the paper is indexed, for both modes;
* **no evidence**: the questions whose paper is indexed that get no edge (target <= 2 %);
* **unrelated**: the held-back questions answered with an edge that shares no linked id and no
  content word with the question (target <= 5 %);
* query time (median, p95) as understood.

    python scripts/bench_retrieval.py [--embedder hashed|minilm] [--pqa FILE] [--limit N]
        [--json] [--misses 20] [--working-dir DIR] [--words-floor F [F ...]]

``--words-floor`` asks the tuning half with each BM25 floor in turn (``query.rank.WORDS_FLOOR``)
and prints its figures only.

With ``--working-dir`` the collection is kept: a second run with the same embedder indexes
nothing again (every paper is unchanged) and only asks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from corpora import SHARED

from fastbmrag.testing.responders import numbered_sentences, schema_title, task_text

PQA = SHARED / "pubmedqa" / "pqal_train.json"
TOP = 50
HOLD_BACK_EVERY = 5
KS = (1, 5, 10, 50)


# --- the stand-in reader --------------------------------------------------------------------
#
# What breaks a noun phrase: English closed-class words (articles, pronouns, prepositions,
# conjunctions, auxiliaries, modals, quantifiers) and the verbs of reporting that abstracts use.
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_BREAK = _words(
    """a an the this that these those its their his her our your my it they we he she you i
    them us him of in on at by for with without within from to into onto upon over under
    between among through during after before about against across along around than as per
    via vs versus and or but nor not no yes so if then thus therefore however although though
    while whereas when where which who whom whose what why how whether both either neither
    each every all any some many much more most less least few several such other another
    same only also even very too well still yet already is are was were be been being am has
    have had having do does did done can could may might must shall should will would
    there here whereby whether one two three four five six seven eight nine ten first second
    third least most often usually significantly respectively including included include
    includes using used use showed shown show shows found find finds performed obtained
    compared compare evaluated evaluate assessed assess investigated investigate examined
    examine determined determine measured measure reported report revealed reveal suggest
    suggests suggested indicate indicates indicated observed observe associated increased
    decreased reduced improved higher lower greater smaller patients subjects study studies
    results result conclusion conclusions methods method aim aims objective objectives
    background purpose data analysis total mean median group groups case cases years year
    months month days day weeks week age aged rate rates number numbers level levels"""
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w'\-/]*|[^\sA-Za-z0-9]")
# types by what the head word of a phrase says
_DISEASE_END = re.compile(r"(?:osis|itis|oma|omas|emia|aemia|pathy|plasia|trophy|algia|iasis)$")
_DISEASE_HEAD = _words(
    """disease diseases disorder disorders syndrome syndromes cancer cancers carcinoma
    carcinomas tumor tumors tumour tumours infection infections failure injury injuries
    deficiency lesion lesions fracture fractures hypertension diabetes obesity stroke
    asthma depression dementia infarction fibrillation insufficiency pain"""
)
_CHEMICAL_END = re.compile(
    r"(?:ine|ines|ol|ide|ides|ate|ates|mab|nib|pril|sartan|statin|mycin|cillin|azole|vir|one)$"
)
_CHEMICAL_HEAD = _words("acid acids drug drugs vitamin hormone steroid steroids")
_CELL_HEAD = _words("cell cells tissue tissues lymphocytes neurons macrophages")
_PROCESS_HEAD = _words("pathway pathways signaling signalling apoptosis autophagy proliferation")
_SYMBOL = re.compile(r"^[A-Z][A-Za-z]*[A-Z0-9][A-Za-z0-9\-]*$")


def phrase_type(words: list[str]) -> str:
    head = words[-1]
    low = head.lower()
    if len(words) == 1 and _SYMBOL.match(head) and any(c.isdigit() for c in head):
        return "gene"
    if low in _DISEASE_HEAD or _DISEASE_END.search(low):
        return "disease"
    if low in _CELL_HEAD:
        return "cell"
    if low in _PROCESS_HEAD:
        return "pathway"
    if low in _CHEMICAL_HEAD or (len(words) == 1 and _CHEMICAL_END.search(low) and len(low) > 6):
        return "chemical"
    return "other"


def noun_phrases(sentence: str) -> list[str]:
    """The sentence's maximal runs of words that are no break word, number or punctuation, as
    written (at most 4 words: the head and its nearest modifiers)."""
    out: list[str] = []
    run: list[str] = []
    for tok in [*_TOKEN.findall(sentence), "."]:
        word = tok.strip("'")
        if word and word[0].isalpha() and word.lower() not in _BREAK and len(word) > 1:
            run.append(word)
            continue
        if run and any(len(w) > 3 or w.isupper() for w in run):
            out.append(" ".join(run[-4:]))
        run = []
    return list(dict.fromkeys(out))


def reader_draft(text: str) -> dict[str, Any]:
    """A stage-1 answer: each sentence's noun phrases, typed, the first related to the others."""
    entities: list[list[Any]] = []
    numbers: dict[str, int] = {}
    relations: list[list[Any]] = []
    for number, sentence in numbered_sentences(text):
        phrases = noun_phrases(sentence)[:5]
        ids = []
        for p in phrases:
            key = p.casefold()
            if key not in numbers and len(entities) < 60:
                numbers[key] = len(entities) + 1
                entities.append([numbers[key], p, phrase_type(p.split())])
            if key in numbers:
                ids.append(numbers[key])
        for other in ids[1:]:
            if len(relations) < 40 and other != ids[0]:
                relations.append([ids[0], "associated_with", other, [number]])
    return {"e": entities, "r": relations}


def responder(request: dict[str, Any]) -> dict[str, Any] | str:
    from fastbmrag.testing.responders import responder as default

    if schema_title(request) == "Draft":
        return reader_draft(task_text(request))
    return default(request)


# --- the run ----------------------------------------------------------------------------------


def papers_and_questions(
    path: Path, limit: int | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    pmids = sorted(data, key=int)[:limit]
    papers, questions = [], []
    for i, pmid in enumerate(pmids):
        item = data[pmid]
        held = i % HOLD_BACK_EVERY == HOLD_BACK_EVERY - 1
        if not held:
            papers.append(
                {"paper_id": pmid, "pmid": pmid, "title": "",
                 "abstract": " ".join(item["CONTEXTS"]), "year": item.get("YEAR")}
            )  # fmt: skip
        questions.append({"pmid": pmid, "question": item["QUESTION"], "held": held})
    return papers, questions


def unrelated(result: Any, question: str) -> bool:
    """Whether an evidence item holds no id the question was linked to (or the broader concept
    it was answered from) and shares no content word with the question or the linked concepts'
    names (stems of the words that are no function words, common words included)."""
    from fastbmrag.text.stems import content_words

    ids = {m["id"] for m in result.understood if m.get("id")}
    ids |= {m["broader"]["id"] for m in result.understood if m.get("broader")}
    names = " ".join(m["name"] for m in result.understood)
    asked = set(content_words(f"{question} {names}", {}))
    for e in result.edges:
        p = e.payload
        held = {p.get("source_key"), p.get("target_key"), *(p.get("source_ancestors") or ()),
                *(p.get("target_ancestors") or ())}  # fmt: skip
        names = " ".join(str(p.get(f) or "") for f in ("source", "target", "source_raw",
                                                         "target_raw"))  # fmt: skip
        if not (ids & held or asked & set(content_words(names, {}))):
            return True
    return False


def rank_of(result: Any, pmid: str) -> int | None:
    """The rank of the first edge of paper ``pmid`` among the result's edges (None: absent)."""
    return next(
        (i for i, e in enumerate(result.edges, 1) if e.payload.get("paper_id") == pmid), None
    )


async def ask_all(wd: Path, questions: list[dict[str, Any]], fake_url: str) -> list[dict[str, Any]]:
    from fastbmrag.llm.ollama import OllamaClient
    from fastbmrag.prompts import RELATIONSHIP_TYPES
    from fastbmrag.query import QueryOptions, aquery
    from fastbmrag.store.collection import Collection
    from fastbmrag.vocab.loading import load_normalizer

    normalizer = load_normalizer()
    llm = OllamaClient(fake_url, model="phi4", embed_model="mxbai-embed-large")
    understood = QueryOptions(top_k=TOP, no_answer=True)
    plain = QueryOptions(
        top_k=TOP, no_answer=True, link=False, relationship_types=RELATIONSHIP_TYPES
    )
    rows = []
    try:
        with Collection.reader(wd, "pqa") as coll:
            for q in questions:
                t = time.perf_counter()
                a = await aquery(q["question"], coll, llm, normalizer, options=understood)
                took = time.perf_counter() - t
                b = await aquery(q["question"], coll, llm, normalizer, options=plain)
                rows.append(
                    {
                        **q,
                        "rank": rank_of(a, q["pmid"]),
                        "plain_rank": rank_of(b, q["pmid"]),
                        "none": not a.edges,
                        "unrelated": unrelated(a, q["question"]),
                        "reason": (a.no_evidence or {}).get("reason"),
                        "understood": [
                            f"{m['text']}={m['id']}:{m['used_as']}" for m in a.understood
                        ],
                        "seconds": took,
                    }
                )
    finally:
        await llm.aclose()
    return rows


def ranking(ranks: list[int | None]) -> dict[str, float]:
    """hit@k for each of ``KS`` and the mean reciprocal rank of ``ranks`` (None: not found)."""
    n = max(1, len(ranks))
    out = {f"hit@{k}": round(sum(r is not None and r <= k for r in ranks) / n, 3) for k in KS}
    out["MRR"] = round(sum(1 / r for r in ranks if r is not None) / n, 3)
    return out


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    indexed = [r for r in rows if not r["held"]]
    held = [r for r in rows if r["held"]]
    return {
        "questions": len(rows),
        "indexed": len(indexed),
        "held_back": len(held),
        "understood": ranking([r["rank"] for r in indexed]),
        "plain": ranking([r["plain_rank"] for r in indexed]),
        "no evidence (indexed)": round(sum(r["none"] for r in indexed) / max(1, len(indexed)), 3),
        "unrelated (held back)": round(sum(r["unrelated"] for r in held) / max(1, len(held)), 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pqa", type=Path, default=PQA, help="PubMedQA's questions (JSON)")
    ap.add_argument("--limit", type=int, default=None, help="the first N PMIDs only")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", type=int, default=0, help="print N questions that miss")
    ap.add_argument("--working-dir", type=Path, default=None, help="keep the collection here")
    ap.add_argument(
        "--words-floor", type=float, nargs="+", default=None,
        help="ask with each of these BM25 floors in turn (tuning; default: the query's own)",
    )  # fmt: skip
    ap.add_argument(
        "--embedder", choices=("hashed", "minilm"), default="hashed",
        help="the fake's hashed words, or all-MiniLM-L6-v2 (scripts/minilm.py)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if not args.pqa.is_file():
        print(f"{args.pqa} not found: this benchmark reads ../shared/data/pubmedqa",
              file=sys.stderr)  # fmt: skip
        return 2
    from fastbmrag import RAG
    from fastbmrag.testing.fake_ollama import FakeOllama

    papers, questions = papers_and_questions(args.pqa, args.limit)
    embedder = None
    if args.embedder == "minilm":
        from minilm import MiniLM

        embedder = MiniLM()
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOllama(responder=responder, embedder=embedder) as fake,
    ):
        wd = args.working_dir or Path(tmp)
        rag = RAG(wd, "pqa", ollama_host=fake.url)
        t = time.perf_counter()
        rag.insert_paper(papers, pubtator=False)
        index_s = time.perf_counter() - t
        if args.words_floor:
            import fastbmrag.query.rank as rank

            for floor in args.words_floor:
                rank.WORDS_FLOOR = floor
                rows = asyncio.run(ask_all(wd, questions, fake.url))
                print(json.dumps({"words floor": floor,
                                  "tuning": score([r for r in rows if int(r["pmid"]) % 2 == 0])}))  # fmt: skip
            return 0
        rows = asyncio.run(ask_all(wd, questions, fake.url))
    seconds = sorted(r["seconds"] for r in rows)
    out = {
        "all": score(rows),
        "tuning (even PMIDs)": score([r for r in rows if int(r["pmid"]) % 2 == 0]),
        "held out (odd PMIDs)": score([r for r in rows if int(r["pmid"]) % 2 == 1]),
        "query ms median": round(1000 * statistics.median(seconds), 1),
        "query ms p95": round(1000 * seconds[int(0.95 * (len(seconds) - 1))], 1),
        "index s": round(index_s, 1),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    shown = {
        "MISS": [
            r
            for r in rows
            if not r["held"] and r["plain_rank"] and (r["rank"] or TOP + 1) > r["plain_rank"]
        ],
        "NONE": [r for r in rows if not r["held"] and r["none"]],
        "UNRELATED": [r for r in rows if r["held"] and r["unrelated"]],
    }
    for kind, found in shown.items():
        for r in found[: args.misses]:
            print(f"{kind} {r['pmid']} {r.get('rank')}/{r.get('plain_rank')} {r['question']} "
                  f"{r['understood']} {r['reason']}", file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
