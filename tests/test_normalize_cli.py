"""`fastbmrag normalize` and `fastbmrag vocab update|info` through the real CLI."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from doors_support import cli_parts as run

from fastbmrag.errors import EXIT_CANNOT_START

VOCAB = Path(__file__).parent / "data" / "vocab"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def vocab_server() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving tests/data/vocab/."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(VOCAB)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_normalize_prints_a_table() -> None:
    code, out, _ = run("normalize", "IL-1β", "interleukin 1 beta", "endometrioma")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "name",
        "type",
        "normalized_name",
        "ontology_id",
        "matched_by",
        "score",
    ]
    assert lines[1].split() == ["IL-1β", "gene", "IL1B", "HGNC:5992", "symbol", "1.00"]
    assert lines[2].split()[-5:] == ["gene", "IL1B", "HGNC:5992", "name", "0.95"]
    assert lines[3].split() == [
        "endometrioma",
        "disease",
        "Endometriosis",
        "D004715",
        "entry_term",
        "0.90",
    ]


def test_normalize_json_in_input_order_with_type_and_context() -> None:
    code, out, _ = run(
        "normalize", "--json", "--type", "gene", "ER", "CAP", "--context",
        "Cyclase associated actin cytoskeleton regulatory protein 1 (CAP) binds actin.",
    )  # fmt: skip
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["name"] for r in rows] == ["ER", "CAP"]
    assert rows[0]["matched_by"] == "ambiguous" and rows[0]["ontology_id"] is None
    assert set(rows[0]["candidates"]) == {"HGNC:3467", "HGNC:3443"}
    assert rows[1] == {
        "name": "CAP",
        "type": "gene",
        "normalized_name": "CAP1",
        "ontology_id": "HGNC:20040",
        "matched_by": "abbreviation",
        "score": rows[1]["score"],
        "via": "Cyclase associated actin cytoskeleton regulatory protein 1",  # the long form
    }
    assert 0.8 < rows[1]["score"] < 0.95


@pytest.mark.parametrize("suffix", [".tsv", ".csv"])
def test_normalize_input_file(tmp_path: Path, suffix: str) -> None:
    sep = "\t" if suffix == ".tsv" else ","
    f = tmp_path / f"entities{suffix}"
    f.write_text(
        sep.join(["name", "type", "context"]) + "\n"
        + sep.join(["endometrioma", "disease", ""]) + "\n"
        + sep.join(["IDM", "chemical", '"a single dose of indomethacin (IDM) to rats"' if sep == "," else "a single dose of indomethacin (IDM) to rats"]) + "\n"
        + sep.join(["IL-1β", "", ""]) + "\n"
        + sep.join(["MAPK signalling", "pathway", ""]) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    code, out, _ = run("normalize", "--input", str(f), "--json")
    assert code == 0, out
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["name"], r["type"], r["ontology_id"]) for r in rows] == [
        ("endometrioma", "disease", "D004715"),
        ("IDM", "chemical", "D007213"),
        ("IL-1β", "gene", "HGNC:5992"),  # empty type -> --type (auto) -> gene
        ("MAPK signalling", "pathway", None),
    ]
    assert rows[1]["matched_by"] == "abbreviation"
    assert rows[3]["matched_by"] == "none"


def test_normalize_input_as_a_list_of_names(tmp_path: Path) -> None:
    f = tmp_path / "names.txt"
    f.write_text("BRCA1\n\n  \nbreast and ovarian cancer\n", encoding="utf-8")
    code, out, _ = run("normalize", "--input", str(f), "--type", "disease", "--json")
    assert code == 0, out
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["name"], r["type"]) for r in rows] == [
        ("BRCA1", "disease"),
        ("breast and ovarian cancer", "disease"),
    ]


def test_normalize_bad_input_is_one_line_error(tmp_path: Path) -> None:
    f = tmp_path / "x.csv"
    f.write_text("term,kind\nIL1B,gene\n")
    code, out, err = run("normalize", "--input", str(f))
    assert code == EXIT_CANNOT_START
    assert err.strip() == (
        f"Error: {f} has no 'name' column (found: term, kind); "
        "give a header line (name<TAB>type<TAB>context), or one name per line."
    )
    code, _, err = run("normalize")
    assert code == EXIT_CANNOT_START and "Nothing to normalise" in err
    code, _, err = run("normalize", " ")  # a blank name, as a blank line of --input: none
    assert code == EXIT_CANNOT_START and "Nothing to normalise" in err
    code, _, err = run("normalize", "--input", str(tmp_path / "missing.tsv"))
    assert code == EXIT_CANNOT_START and "No such file" in err
    code, _, err = run("normalize", "--input", "/dev/null")
    assert code == EXIT_CANNOT_START and err.strip() == (
        "Error: /dev/null is empty: give a UTF-8 TSV or CSV file."
    )


def test_a_name_too_long_in_input_is_named_by_its_line_and_the_rest_normalised(
    tmp_path: Path,
) -> None:
    names = tmp_path / "names.txt"
    names.write_text(f"IL6\n{'x' * 500}\nTNF\n", encoding="utf-8")
    code, out, err = run("normalize", "--input", str(names))
    assert code == 0 and "HGNC:6018" in out and "HGNC:11892" in out
    assert err.startswith(f"skipped {names} line 2: a name of 500 characters")
    table = tmp_path / "names.tsv"
    table.write_text(f"name\ttype\nIL6\tgene\n{'y' * 500}\tgene\n", encoding="utf-8")
    code, out, err = run("normalize", "--input", str(table))
    assert code == 0 and "HGNC:6018" in out and f"skipped {table} line 3:" in err


def test_vocab_info_bundled() -> None:
    code, out, _ = run("vocab", "info", "--json")
    assert code == 0
    info = json.loads(out)
    assert info["origin"] == "bundled"
    assert info["counts"]["genes"] == 43882
    assert info["sources"]["mesh"]["version"] == "2024"


def test_vocab_update_downloads_and_rebuilds_into_the_cache(vocab_server: str) -> None:
    code, out, err = run(
        "vocab", "update",
        "--hgnc-url", f"{vocab_server}/hgnc_slice.tsv",
        "--mesh-url", f"{vocab_server}/desc_excerpt.xml",
        "--gene-info-url", f"{vocab_server}/gene_info_slice.tsv",
        "--mesh-supplementary-url", f"{vocab_server}/supp_excerpt.xml",
    )  # fmt: skip
    assert code == 0, err
    assert "6 genes" in out and "1 disease and 1 chemical descriptors" in out
    assert "2 supplementary concepts" in out
    code, out, _ = run("vocab", "info", "--json")
    info = json.loads(out)
    assert info["origin"] == "cache"
    assert info["sources"]["hgnc"]["source"] == f"{vocab_server}/hgnc_slice.tsv"
    assert info["counts"]["genes"] == 6
    assert info["sources"]["ncbi_gene"]["source"] == f"{vocab_server}/gene_info_slice.tsv"
    # The rebuilt vocabularies are now the ones in use: TP53 is not among the six genes, and
    # "CDF" is one of IL6's names in NCBI Gene only.
    code, out, _ = run("normalize", "--json", "IL-1β", "TP53", "endometrioma", "CDF")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["ontology_id"] for r in rows] == ["HGNC:5992", None, "D004715", "HGNC:6018"]
    assert rows[3]["matched_by"] == "ncbi_synonym"
    # a supplementary concept (the C id PubTator3 gives) is named, and filtered on through
    # its heading descriptor and that one's ancestors
    from fastbmrag.vocab import load_normalizer

    vocab = load_normalizer()
    assert vocab.name_of("C562650") == vocab.label("C562650") == "Endometriosis, rare form"
    assert vocab.ancestors("C562650")[0] == "D004715"
    assert set(vocab.ancestors("C562650")) == {"D004715", *vocab.ancestors("D004715")}


def test_vocab_update_from_local_files(tmp_path: Path) -> None:
    code, out, err = run(
        "vocab", "update", "--hgnc", str(VOCAB / "hgnc_slice.tsv"),
        "--mesh", str(VOCAB / "desc_excerpt.xml"), "--quiet",
        "--gene-info", str(VOCAB / "gene_info_slice.tsv"),
        "--mesh-supplementary", str(VOCAB / "supp_excerpt.xml"),
    )  # fmt: skip
    assert code == 0, err
    assert err == ""
    assert "Vocabularies rebuilt in" in out
    # a local file's version: its name's, else its date (not "unknown", not "downloaded")
    code, out, _ = run("vocab", "info", "--json")
    versions = {k: v["version"] for k, v in json.loads(out)["sources"].items()}
    assert all(v.startswith("local file of 20") for v in versions.values()), versions


def test_vocab_update_http_error_names_the_fix(vocab_server: str) -> None:
    code, _, err = run(
        "vocab", "update", "--hgnc", str(VOCAB / "hgnc_slice.tsv"),
        "--mesh-url", f"{vocab_server}/desc2099.xml",
        "--gene-info", str(VOCAB / "gene_info_slice.tsv"), "--no-mesh-supplementary",
    )  # fmt: skip
    assert code == EXIT_CANNOT_START
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"Error: Cannot download {vocab_server}/desc2099.xml: HTTP 404")
    assert "--mesh" in last
    # Nothing half-built is left in use, and no empty folder behind.
    code, out, _ = run("vocab", "info", "--json")
    assert json.loads(out)["origin"] == "bundled"
    assert not (Path(os.environ["FASTBMRAG_HOME"]) / "vocab").exists()


def test_explain_prints_the_decision_for_each_name() -> None:
    code, out, _ = run("normalize", "--explain", "--type", "gene", "SMAD2/3", "TIPE2", "caspases")
    assert code == 0
    decisions = [
        "SMAD2/3 (gene)\n"
        "  decided by: coordination of 2 names (score 1.00)\n"
        "    SMAD2 -> HGNC:6768 SMAD2 (SMAD family member 2) by symbol (1.00)\n"
        "    SMAD3 -> HGNC:6769 SMAD3 (SMAD family member 3) by symbol (1.00)",
        "TIPE2 (gene)\n"
        "  decided by: ncbi_synonym (score 0.70)\n"
        "  -> HGNC:26277 TNFAIP8L2 (TNF alpha induced protein 8 like 2)",
        "caspases (gene)\n  decided by: gene_group (score 0.80)\n  -> HGNC-GROUP:468 Caspases\n",
    ]
    blocks = out.split("\n\n")
    assert len(blocks) == 3
    for block, decision in zip(blocks, decisions, strict=True):
        assert block.startswith(decision.rstrip("\n"))
    # then the stages tried, in order, each with what it found
    assert "  stages tried:\n    gene: the name as written: HGNC:26277 TNFAIP8L2" in blocks[1]
    code, out, _ = run("normalize", "--explain", "--type", "gene", "NADPH oxidase")
    assert out.startswith(
        "NADPH oxidase (gene)\n  no id: no stage matched (kept as 'NADPH oxidase')\n"
        "  stages tried:\n    gene: the name as written: nothing\n"
    )
    code, out, _ = run("normalize", "--explain", "--type", "disease", "forestomach tumors")
    assert out.startswith(
        "forestomach tumors (disease)\n  no id: the closest term ('tumor') is too small a part "
        "of the name (a part needs 0.71), or adds a word it lacks (score 0.58); kept as "
        "'forestomach tumors'\n"
        "    candidate: D009369 Neoplasms\n"
    )
    # a rewrite or part that matched is shown
    code, out, _ = run("normalize", "--explain", "--type", "disease", "severe hypotension")
    assert out.startswith(
        "severe hypotension (disease)\n  decided by: partial (score 0.73)\n"
        "  by way of: 'hypotension'\n  -> D007022 Hypotension\n"
    )
    assert "disease: a part of the name: D007022 Hypotension (partial" in out
    assert "disease: the fallbacks: D007022 Hypotension (partial" in out
    assert "disease: one word short of a term: nothing\n" in out  # each fallback stage tried
    # a short form the text defines otherwise loses its dictionary reading, and says why
    context = "Groups were compared by analysis of variance (ANOVA)."
    code, out, _ = run("normalize", "--explain", "ANOVA", "--context", context)
    assert "gene: the name as written: HGNC:7887 NOVA2 (alias)\n" in out
    assert "gene: the long form the text defines shares no word with it: dropped\n" in out
    code, out, _ = run("normalize", "--explain", "--json", "--type", "gene", "CAP")
    row = json.loads(out)
    assert row["matched_by"] == "ambiguous" and "HGNC:20040" in row["candidates"]
    assert (
        row["explain"][1] == "  no id: the name fits several, and the context picks none of them:"
    )
