"""Sentence splitters compared on the real abstracts and PMC passages in tests/data.

The choice behind fastbmrag.text.sentences. Needs the candidates: ``pip install pysbd syntok``
(blingfire is a dependency). Every title, abstract and main-text passage (section labels
removed, as fastbmrag.text.sentences does) goes through each splitter; counted:

* splits after an abbreviation ("et al.", "e.g.", "i.e.", "Fig.", "sp.", "vs.", "ca.", ...);
* sentences that start with a lower-case letter or punctuation (a split inside a sentence);
* sentences containing ". Word word" after a word of four or more lower-case letters
  (a missed split);
* boundaries that only one splitter makes, with a sample of each (``--show N``).

    python scripts/bench_splitters.py [--show 10]
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
_LABEL = re.compile(r"^\[[^\]]*\] ")
_ABBREV_END = re.compile(
    r"(?:\bet al|\be\.g|\bi\.e|\bFigs?|\bvs|\bca|\bapprox|\bNo|\bEq|\bRef|\bDr|\bspp?|\bcf|"
    r"\bresp|\bSuppl|\bTab)\.$",
    re.I,
)
_MISSED = re.compile(r"[a-z]{4,}[.!?] +(?=[A-Z][a-z]+ )")

Spans = list[tuple[int, int]]


def texts() -> list[str]:
    from fastbmrag.papers import ReadReport, iter_papers

    out: list[str] = []
    paths = [DATA / "pmc", DATA / "eutils", DATA / "medline", DATA / "query" / "papers.csv"]
    for p in iter_papers(paths, ReadReport()):
        out += [t for t in (p.title, p.abstract) if t.strip()]
        out += [_LABEL.sub("", t) for t in p.paragraphs if t.strip()]
    return out


def splitters() -> dict[str, Callable[[str], Spans]]:
    import blingfire
    import pysbd
    import syntok.segmenter as syntok

    sbd = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def with_syntok(text: str) -> Spans:
        out = []
        for paragraph in syntok.analyze(text):
            for sentence in paragraph:
                toks = list(sentence)
                out.append((toks[0].offset, toks[-1].offset + len(toks[-1].value)))
        return out

    return {
        "blingfire": lambda t: list(blingfire.text_to_sentences_and_offsets(t)[1]),
        "pysbd": lambda t: [(s.start, s.end) for s in sbd.segment(t)],
        "syntok": with_syntok,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--show", type=int, default=0, help="sample N boundaries only one splitter makes"
    )
    args = ap.parse_args()
    corpus = texts()
    print(f"{len(corpus)} texts, {sum(map(len, corpus)):,} characters")
    ends: dict[str, list[set[int]]] = {}
    for name, split in splitters().items():
        t0 = time.perf_counter()
        spans = [split(t) for t in corpus]
        ms = 1000 * (time.perf_counter() - t0)
        abbrev = lower = missed = n = 0
        for text, found in zip(corpus, spans, strict=True):
            for a, b in found:
                s = text[a:b].strip()
                n += 1
                abbrev += bool(_ABBREV_END.search(s))
                lower += bool(a > 0 and s and (s[0].islower() or s[0] in ".,;)"))
                missed += len(_MISSED.findall(s[:-1]))
        ends[name] = [
            {len(t[:b].rstrip()) for _, b in f} for t, f in zip(corpus, spans, strict=True)
        ]
        print(f"{name:10} {n:5d} sentences  {abbrev:3d} after an abbreviation  {lower:3d} start "
              f"lower-case  {missed:3d} missed  {ms:6.0f} ms")  # fmt: skip
    for name in ends:
        others = [o for o in ends if o != name]
        only = [
            f"{t[max(0, x - 50) : x]} ||| {t[x : x + 30]}"
            for i, t in enumerate(corpus)
            for x in ends[name][i] - set().union(*(ends[o][i] for o in others))
        ]
        print(f"boundaries only {name} makes: {len(only)}")
        for sample in random.Random(1).sample(only, min(args.show, len(only))):
            print(f"    {sample!r}")


if __name__ == "__main__":
    main()
