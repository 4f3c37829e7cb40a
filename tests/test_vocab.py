"""Vocabulary builders and the dictionary normaliser, on the bundled HGNC/MeSH data."""

from __future__ import annotations

import gc
import gzip
import json
import os
import weakref
from pathlib import Path

import pytest

from fastbmrag.errors import VocabError
from fastbmrag.vocab import DictionaryNormalizer, find_abbreviations, load_normalizer, vocab_info
from fastbmrag.vocab.building.compile import build_from_files, compile_mesh
from fastbmrag.vocab.building.sources import (
    MeshRecord,
    MeshTerm,
    parse_gene_info,
    parse_hgnc_tsv,
    parse_mesh_xml,
)
from fastbmrag.vocab.loading import BUNDLED_DIR
from fastbmrag.vocab.rules.keys import gene_key, term_key

VOCAB = Path(__file__).parent / "data" / "vocab"


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


# ---- keys and parsers ------------------------------------------------------------------------


def test_keys_fold_greek_punctuation_and_plurals() -> None:
    assert gene_key("IL-1β") == gene_key("IL1-beta") == gene_key("il1b") == "il1b"
    assert gene_key("interleukin-1 beta") == gene_key("interleukin 1β")
    # roman numerals of two letters or more are numbers; single letters stay letters
    assert gene_key("IL-II") == gene_key("IL2") == "il2"
    assert gene_key("collagen type IV") == "collagentype4"
    assert gene_key("factor X") == "factorx"
    assert term_key("Endometrioses") == term_key("endometriosis")
    assert term_key("Anaemia") == term_key("anemia")
    assert term_key("Non-Hodgkin's Lymphomas") == term_key("non hodgkin lymphoma")


def test_mesh_xml_parser_reads_the_dtd_shape() -> None:
    records = {r.ui: r for r in parse_mesh_xml(VOCAB / "desc_excerpt.xml")}
    assert list(records) == ["D000003", "D004715", "D053583"]
    endo = records["D004715"]
    assert endo.name == "Endometriosis"
    assert endo.tree_numbers == ["C12.050.351.500.163", "C12.100.250.163"]
    assert [t.text for t in endo.terms] == ["Endometriosis", "Endometrioma"]
    assert endo.terms[0].record_preferred and not endo.terms[1].record_preferred
    assert endo.categories() == "C"
    il1b = records["D053583"]
    # The pharmacological action's DescriptorReferredTo is not a term of this descriptor.
    assert "Inflammation Mediators" not in [t.text for t in il1b.terms]
    assert [t.text for t in il1b.terms] == ["Interleukin-1beta", "IL-1 beta", "Catabolin"]
    assert il1b.categories() == "D"
    assert records["D000003"].categories() == ""  # J tree: not kept


def test_mesh_xml_parser_rejects_other_xml(tmp_path: Path) -> None:
    bad = tmp_path / "desc2024.xml"
    bad.write_text("<PubmedArticleSet><PubmedArticle/></PubmedArticleSet>")
    with pytest.raises(VocabError, match="no DescriptorRecord"):
        list(parse_mesh_xml(bad))
    bad.write_text("<DescriptorRecordSet><DescriptorRecord>")
    with pytest.raises(VocabError, match="not valid MeSH descriptor XML"):
        list(parse_mesh_xml(bad))


def test_hgnc_parser_reads_multivalued_columns() -> None:
    genes = {g.symbol: g for g in parse_hgnc_tsv(VOCAB / "hgnc_slice.tsv")}
    assert genes["IL1B"].hgnc_id == "HGNC:5992"
    assert genes["IL1B"].alias_symbols == ["IL1F2", "IL-1B", "IL1-BETA"]
    assert genes["ONECUT1"].prev_symbols == ["HNF6", "HNF6A"]
    assert genes["ONECUT1"].alias_symbols == ["HNF-6"]
    assert genes["ONECUT1"].prev_names == ["one cut domain, family member 1"]


def test_hgnc_parser_names_the_fix_for_a_wrong_file(tmp_path: Path) -> None:
    wrong = tmp_path / "x.tsv"
    wrong.write_text("a\tb\n1\t2\n")
    with pytest.raises(VocabError, match="not an HGNC complete-set TSV"):
        list(parse_hgnc_tsv(wrong))


def test_build_from_small_files_and_load(tmp_path: Path) -> None:
    gz = tmp_path / "desc2024.xml.gz"
    gz.write_bytes(gzip.compress((VOCAB / "desc_excerpt.xml").read_bytes()))
    manifest = build_from_files(VOCAB / "hgnc_slice.tsv", tmp_path / "out", mesh_xml=gz)
    assert manifest["counts"]["genes"] == 6
    assert manifest["counts"]["disease_descriptors"] == 1
    assert manifest["counts"]["chemical_descriptors"] == 1
    assert manifest["sources"]["mesh"]["version"] == "2024"
    small = load_normalizer(tmp_path / "out")
    assert small.normalize("endometrioma", "disease").ontology_id == "D004715"
    assert small.normalize("IL-1 beta", "chemical").ontology_id == "D053583"
    assert small.normalize("TP53", "gene").ontology_id is None  # not in the slice
    assert vocab_info(tmp_path / "out")["origin"] == "custom"


def test_a_rebuilt_directory_is_reloaded_and_the_old_normaliser_freed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    build_from_files(VOCAB / "hgnc_slice.tsv", out, mesh_xml=VOCAB / "desc_excerpt.xml")
    first = load_normalizer(out)
    assert load_normalizer(out) is first
    old = weakref.ref(first)
    del first
    manifest = out / "manifest.json"
    stat = manifest.stat()  # a rebuild rewrites the manifest: a newer modification time
    os.utime(manifest, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = load_normalizer(out)
    assert second is not old()
    assert second.normalize("endometrioma", "disease").ontology_id == "D004715"
    gc.collect()
    assert old() is None  # a long-lived process keeps one normaliser per directory


def test_bundled_vocab_is_complete() -> None:
    info = vocab_info()
    assert info["origin"] == "bundled"
    assert info["sources"]["hgnc"]["version"] == "2024-10"
    assert info["sources"]["mesh"]["version"] == "2024"
    assert info["counts"]["genes"] == 43882
    assert info["counts"]["disease_descriptors"] > 5000
    # opened, not loaded: one table file, no whole-table pickle
    assert info_files() == {"tables": "vocab.sqlite", "supplementary": "supplementary.keys"}
    assert (BUNDLED_DIR / "vocab.sqlite").stat().st_size < 50_000_000


def info_files() -> dict[str, str]:
    files: dict[str, str] = json.loads((BUNDLED_DIR / "manifest.json").read_text())["files"]
    return files


def test_load_is_memoised(norm: DictionaryNormalizer) -> None:
    assert load_normalizer() is norm


def test_broken_vocab_dir_is_a_vocab_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"files": {"genes": "g", "mesh": "m"}}))
    with pytest.raises(VocabError, match="vocab update"):
        load_normalizer(tmp_path)
    with pytest.raises(VocabError, match="missing manifest.json"):
        load_normalizer(tmp_path / "nowhere")
    (tmp_path / "vocab.sqlite").write_bytes(b"not a database" * 100)
    (tmp_path / "manifest.json").write_text(json.dumps({"files": {"tables": "vocab.sqlite"}}))
    with pytest.raises(VocabError, match="vocab update"):
        load_normalizer(tmp_path)


# ---- genes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["IL-1β", "IL1B", "il-1beta", "IL1-beta", "interleukin 1 beta", "Interleukin-1β", "IL1B gene",
     "IL-1β protein", "IL1B mRNA"],
)  # fmt: skip
def test_il1b_spellings(norm: DictionaryNormalizer, name: str) -> None:
    r = norm.normalize(name, "gene")
    assert (r.normalized_name, r.ontology_id) == ("IL1B", "HGNC:5992")
    assert r.name == name and r.type == "gene"


def test_preference_symbol_over_previous_over_alias(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("IL1B", "gene")
    assert (r.matched_by, r.score) == ("symbol", 1.0)
    # "AR" is the approved symbol of the androgen receptor and an alias of three other genes.
    ar = norm.normalize("AR", "gene")
    assert (ar.ontology_id, ar.matched_by) == ("HGNC:644", "symbol")
    assert "HGNC:651" in ar.candidates  # AREG, by alias: listed, not chosen
    tnf = norm.normalize("TNF-alpha", "gene")
    assert (tnf.ontology_id, tnf.matched_by) == ("HGNC:11892", "prev_symbol")
    p53 = norm.normalize("p53", "gene")
    assert (p53.normalized_name, p53.ontology_id, p53.matched_by) == ("TP53", "HGNC:11998", "alias")


def test_ambiguous_alias_is_reported_not_picked(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("ER", "gene")
    assert r.ontology_id is None
    assert r.matched_by == "ambiguous"
    assert set(r.candidates) == {"HGNC:3467", "HGNC:3443"}  # ESR1, EREG
    assert r.normalized_name == "ER"


def test_ambiguous_alias_resolved_from_context(norm: DictionaryNormalizer) -> None:
    context = "Tumours were ER positive; estrogen receptor 1 signalling drove growth."
    r = norm.normalize("ER", "gene", context)
    assert (r.normalized_name, r.ontology_id, r.matched_by) == ("ESR1", "HGNC:3467", "alias")
    assert set(r.candidates) == {"HGNC:3467", "HGNC:3443"}


def test_the_context_picks_a_gene_by_the_words_that_say_which(
    norm: DictionaryNormalizer,
) -> None:
    # "p50": ASCC1 (activating signal cointegrator 1 complex subunit 1) and NFKB1 (nuclear
    # factor kappa B subunit 1). "kappa" says which; "complex" and "subunit" do not.
    r = norm.normalize("p50", "gene", "The nuclear factor kappa B subunit p50 binds DNA.")
    assert (r.normalized_name, r.matched_by) == ("NFKB1", "alias")
    r = norm.normalize("p50", "gene", "p50 was measured in the protein complex of each subunit.")
    assert (r.ontology_id, r.matched_by) == (None, "ambiguous")
    assert set(r.candidates) == {"HGNC:24268", "HGNC:7794"}


def test_a_gene_name_with_a_short_form_the_text_defines(norm: DictionaryNormalizer) -> None:
    text = "Vascular endothelial growth factor (VEGF) signals through VEGF receptor 2."
    r = norm.normalize("VEGF receptor 2", "gene", text)
    assert (r.normalized_name, r.matched_by) == ("KDR", "abbreviation")
    assert norm.normalize("VEGF receptor 2", "gene").ontology_id is None


def test_abbreviation_defined_in_context(norm: DictionaryNormalizer) -> None:
    # Without context "CAP" is an alias of six genes; the text defines it.
    assert norm.normalize("CAP", "gene").matched_by == "ambiguous"
    context = (
        "Cyclase associated actin cytoskeleton regulatory protein 1 (CAP) binds actin. "
        "Loss of CAP slowed migration."
    )
    r = norm.normalize("CAP", "gene", context)
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (
        "CAP1",
        "HGNC:20040",
        "abbreviation",
    )


def test_abbreviation_finder() -> None:
    text = "The hepatocyte nuclear factor 6 (HNF-6) and indomethacin (IDM) were given."
    assert find_abbreviations(text) == {
        "HNF-6": "hepatocyte nuclear factor 6",
        "IDM": "indomethacin",
    }


# ---- diseases and chemicals ------------------------------------------------------------------


@pytest.mark.parametrize(
    "formula",
    [
        "H2O2",  # a peroxide, not hydrogen oxide (water)
        "N2O",  # dinitrogen monoxide (nitrous oxide), not nitrogen monoxide (nitric oxide)
        "O2-",  # superoxide (O2, charge -1) or oxide (O, charge -2); not oxygen
    ],
)
def test_a_formula_gets_no_other_compound(norm: DictionaryNormalizer, formula: str) -> None:
    r = norm.normalize(formula, "chemical")
    assert (r.ontology_id, r.normalized_name) == (None, formula), r


def test_a_formula_only_a_supplementary_concept_names_gets_it(
    norm: DictionaryNormalizer,
) -> None:
    # no descriptor's term, but the name of MeSH's supplementary concept ferric oxide; its
    # part "2O3" is still no other oxide (As2O3)
    r = norm.normalize("Fe2O3", "chemical")
    assert (r.ontology_id, r.normalized_name) == ("C000499", "ferric oxide"), r


def test_a_definition_in_the_text_beats_an_element_symbol(norm: DictionaryNormalizer) -> None:
    text = "CIN was defined as an increase in serum creatinine (Cr) of 0.5 mg/dl or more."
    assert norm.normalize("Cr", "chemical", text).normalized_name == "Creatinine"
    assert norm.normalize("Cr", "chemical").normalized_name == "Chromium"


def test_a_longer_long_form_does_not_begin_with_a_function_word(
    norm: DictionaryNormalizer,
) -> None:
    # "from cyclosporin A" would be read without its function words ("from", "a"): Cyclosporins
    text = "Protocols of conversion from cyclosporin A (CsA) to sirolimus have been studied."
    assert norm.normalize("CsA", "chemical", text).normalized_name == "Cyclosporine"


def test_a_function_word_parts_a_phrase_from_the_long_form(norm: DictionaryNormalizer) -> None:
    text = "Lindane acts as an antagonist at the gamma-aminobutyric acid (GABA)-A receptor."
    r = norm.normalize("GABA", "chemical", text)
    assert (r.normalized_name, r.via) == ("gamma-Aminobutyric Acid", "gamma-aminobutyric acid")


def test_a_misspelt_long_form_still_defines_its_short_form(norm: DictionaryNormalizer) -> None:
    text = "The novel immunosuppressive drug sirolmus (Srl) lacks nephrotoxic effects."
    r = norm.normalize("Srl", "chemical", text)
    assert (r.normalized_name, r.matched_by) == ("Sirolimus", "abbreviation")


def test_a_compound_modifiers_hyphen_on_both_forms(norm: DictionaryNormalizer) -> None:
    text = "Dexamethasone- (Dex-) induced hypertension. Dex increased systolic pressure."
    assert norm.normalize("Dex", "chemical", text).normalized_name == "Dexamethasone"
    # a charge is no such hyphen
    text = "The superoxide anion (O2-) was measured."
    assert norm.normalize("O2-", "chemical", text).normalized_name == "Superoxides"


def test_a_short_form_after_another_short_form_is_not_defined_by_it(
    norm: DictionaryNormalizer,
) -> None:
    # The letters of "zidovudine" do not spell AZT; the words before it still define it.
    r = norm.normalize("AZT", "chemical", "Patients took zidovudine (AZT) daily.")
    assert (r.ontology_id, r.matched_by) == ("D015215", "abbreviation")
    # "IL-13 (LpA)": the parenthesis names the stimulus of a measurement, not IL-13's name.
    text = "Cells showed increased IL-5 (LpA, p = 0.07) and IL-13 (LpA), higher GM-CSF."
    assert norm.normalize("LpA", "chemical", text).ontology_id is None


def test_types_keep_to_their_trees(norm: DictionaryNormalizer) -> None:
    assert norm.normalize("endometriosis", "chemical").ontology_id is None
    assert norm.normalize("famotidine", "disease").ontology_id is None
    assert norm.normalize("IL1B", "disease").ontology_id is None


def test_auto_picks_the_best_type(norm: DictionaryNormalizer) -> None:
    assert norm.normalize("IL-1β").type == "gene"
    r = norm.normalize("endometrioma")
    assert (r.type, r.ontology_id) == ("disease", "D004715")
    assert norm.normalize("tamoxifen", "auto").type == "chemical"


def test_other_types_and_unknown_names_pass_through(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("  rs12345   A>G ", "variant")
    assert (r.normalized_name, r.ontology_id, r.matched_by, r.score) == (
        "rs12345 A>G",
        None,
        "none",
        0.0,
    )
    assert r.type == "variant"
    u = norm.normalize("frobnicated wibble", "disease")
    assert (u.normalized_name, u.ontology_id, u.matched_by) == ("frobnicated wibble", None, "none")
    assert norm.normalize("", "gene").matched_by == "none"


def test_normalize_many_keeps_order(norm: DictionaryNormalizer) -> None:
    out = norm.normalize_many([("IL-1β", "gene"), ("endometrioma", "disease", ""), ("tamoxifen",)])
    assert [r.ontology_id for r in out] == ["HGNC:5992", "D004715", "D013629"]


# ---- entity linking in free text ---------------------------------------------------------------


def test_find_mentions_in_a_question(norm: DictionaryNormalizer) -> None:
    found = norm.find_mentions("What is the role of IL1B in endometriosis?")
    assert [(m.name, m.normalized_name, m.ontology_id) for m in found] == [
        ("IL1B", "IL1B", "HGNC:5992"),
        ("endometriosis", "Endometriosis", "D004715"),
    ]


def test_find_mentions_longest_match_and_types(norm: DictionaryNormalizer) -> None:
    text = "Does interleukin 1 beta drive breast cancer in women treated with tamoxifen?"
    spans = norm.find_mention_spans(text)
    assert [(text[s:e], m.ontology_id) for s, e, m in spans] == [
        ("interleukin 1 beta", "HGNC:5992"),
        ("breast cancer", "D001943"),
        ("tamoxifen", "D013629"),
    ]
    only_genes = norm.find_mentions(text, types=["gene"])
    assert [m.ontology_id for m in only_genes] == ["HGNC:5992"]


def test_find_mentions_skips_common_words(norm: DictionaryNormalizer) -> None:
    # "CAT", "SET", "MAX" are gene symbols; as ordinary lower-case words they are not genes.
    assert norm.find_mentions("Which cat was set to the max level?", types=["gene"]) == []


def test_compile_mesh_tree_derived_tables() -> None:
    # Real MeSH 2024 descriptors, names, terms and tree numbers.
    records = [
        MeshRecord("D000013", "Congenital Abnormalities", ["C16.131"]),
        MeshRecord("D000014", "Abnormalities, Drug-Induced", ["C16.131.042"]),
        MeshRecord("D009069", "Movement Disorders", ["C10.228.662"]),
        MeshRecord("D017109", "Akathisia, Drug-Induced", ["C10.228.662.037", "C25.100.249"]),
        MeshRecord("D000787", "Angina Pectoris", ["C14.280.647.187"]),
        MeshRecord(
            "D000788",
            "Angina Pectoris, Variant",
            ["C14.280.647.187.150.150"],
            [MeshTerm("Variant Angina Pectoris"), MeshTerm("Prinzmetal Angina")],
        ),
    ]
    data = compile_mesh(records)
    ui = [row[0] for row in data["descriptors"]]
    named = {ui[k]: ui[v] for k, v in data["induced_child"].items()}
    # The drug-induced child named like its parent; not Akathisia under Movement Disorders.
    assert named == {"D000013": "D000014"}
    # "variant angina" is "Variant Angina Pectoris" less one word.
    assert ui[data["superset"]["angina variant"]] == "D000788"
    assert "angina pectoris" not in data["superset"]  # a term of its own


@pytest.mark.parametrize("stem", ["cytochrome P450", "NADPH oxidase", "TCF"])
def test_a_family_stem_among_one_genes_ncbi_names_is_not_that_gene(
    norm: DictionaryNormalizer, stem: str
) -> None:
    # NCBI Gene lists these among one member's names (CYP4F3, FMO5, HNF4A); each begins the
    # names of several genes, so it names the family, not that member
    assert norm.normalize(stem, "gene").ontology_id is None


def test_gene_info_is_joined_to_hgnc_through_its_cross_references(tmp_path: Path) -> None:
    info = parse_gene_info(VOCAB / "gene_info_slice.tsv")
    assert info["HGNC:6018"][0][:3] == ["BSF-2", "BSF2", "CDF"]  # IL6's synonyms
    assert "interleukin-6" in info["HGNC:6018"][1]  # ... and protein names
    bad = tmp_path / "x.tsv"
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(VocabError, match="not an NCBI gene_info file"):
        parse_gene_info(bad)


@pytest.mark.parametrize(
    ("name", "genes"),
    [
        ("SMAD2/3", ["SMAD2", "SMAD3"]),
        ("CDK4/6", ["CDK4", "CDK6"]),
        ("ERK1/2", ["MAPK3", "MAPK1"]),
        ("IL-4 and -13", ["IL4", "IL13"]),
        ("IL-4, IL-5 and IL-13", ["IL4", "IL5", "IL13"]),
        ("TGF-beta1-3", ["TGFB1", "TGFB2", "TGFB3"]),
    ],
)
def test_a_coordination_keeps_every_gene_it_names(
    norm: DictionaryNormalizer, name: str, genes: list[str]
) -> None:
    result = norm.normalize(name, "gene")
    assert result.ontology_id is None and result.matched_by == "coordination"
    assert [p.normalized_name for p in result.parts] == genes
    assert result.candidates == tuple(p.ontology_id for p in result.parts)


def test_a_coordination_whose_parts_do_not_all_name_genes_alike_abstains(
    norm: DictionaryNormalizer,
) -> None:
    assert norm.normalize("IL-4 and blood", "gene").matched_by == "none"
    # CHL1 is an approved symbol, "CHL2" only an NCBI synonym: not read as a pair
    assert norm.normalize("CHL1 and 2", "gene").matched_by == "none"


@pytest.mark.parametrize(
    ("name", "group"),
    [
        ("MAPK", "Mitogen-activated protein kinases"),  # MAPK1 ... MAPK15, one group
        ("Smads", "SMAD family"),
        ("CDK", "Cyclin dependent kinases"),
    ],
)
def test_a_numbered_series_of_symbols_names_its_family(
    norm: DictionaryNormalizer, name: str, group: str
) -> None:
    r = norm.normalize(name, "gene")
    assert (r.normalized_name, r.matched_by) == (group, "gene_group")
    assert r.ontology_id is not None and r.ontology_id.startswith("HGNC-GROUP:")


def test_a_name_that_begins_related_genes_names_is_no_family_stem(
    norm: DictionaryNormalizer,
) -> None:
    # "tumor necrosis factor alpha induced protein", "... alpha, converting enzyme" are genes
    # related to TNF, no kinds of it: NCBI Gene's protein name stays TNF's
    r = norm.normalize("tumor necrosis factor alpha", "gene")
    assert (r.normalized_name, r.matched_by) == ("TNF", "protein_name")


def test_a_stem_of_several_groups_names_no_family(norm: DictionaryNormalizer) -> None:
    # "IL" begins the names of interleukins, their receptors and others: no one group
    assert norm.normalize("IL", "gene").ontology_id is None
    # a series that is a small part of its only shared group names none ("GLI" of the
    # C2H2-type zinc fingers); "GLI" itself is a previous symbol of GLI1
    assert norm.normalize("GLI", "gene").matched_by != "gene_group"


def test_an_isoform_after_an_alias_is_not_read(norm: DictionaryNormalizer) -> None:
    # "OCT4" is an alias (of POU5F1), and an alias before a Greek letter often names a family
    assert norm.normalize("OCT4", "gene").normalized_name == "POU5F1"
    assert norm.normalize("OCT4 beta", "gene").ontology_id is None


@pytest.mark.parametrize(
    ("name", "gene", "via"),
    [
        ("CEBPalpha", "CEBPA", "CEBP alpha"),  # a Greek letter glued to the capitals
        ("IL-2Ralpha", "IL2RA", "IL-2R alpha"),
        ("Toll-like receptor (TLR) 4", "TLR4", "TLR 4"),  # a short form inside the name
        # "COX-2" is also MT-CO2's alias: the name without the short form decides
        ("cyclooxygenase (COX)-2", "PTGS2", "cyclooxygenase-2"),
        ("leukocyte antigen (HLA)-DRB1", "HLA-DRB1", "HLA-DRB1"),
        ("Never in mitosis gene A (NIMA)-related kinase 2", "NEK2", "NIMA-related kinase 2"),
    ],
)
def test_a_name_written_out_of_its_dictionary_form(
    norm: DictionaryNormalizer, name: str, gene: str, via: str
) -> None:
    result = norm.normalize(name, "gene")
    assert (result.normalized_name, result.matched_by, result.via) == (gene, "respelled", via)


def test_a_glued_greek_letter_the_dictionary_writes_so_is_read_as_written(
    norm: DictionaryNormalizer,
) -> None:
    # HGNC lists "TRbeta" as an alias of THRB; spaced, "TR beta" would read as the symbol TRB
    assert norm.normalize("TRbeta", "gene").normalized_name == "THRB"


@pytest.mark.parametrize(
    ("name", "gene"),
    [("interleukin II", "IL2"), ("IL-II", "IL2"), ("MMP-IX", "MMP9"), ("glycoprotein IX", "GP9"),
     ("UP III", "UPK3A")],  # the last: NCBI Gene's synonym "UPIII", the numeral glued on
)  # fmt: skip
def test_roman_numerals_in_gene_names(norm: DictionaryNormalizer, name: str, gene: str) -> None:
    assert norm.normalize(name, "gene").normalized_name == gene


@pytest.mark.parametrize(
    "name", ["Plasminogen activator inhibitor type 1", "plasminogen activator inhibitor type-1"]
)
def test_type_before_a_subtype_number(norm: DictionaryNormalizer, name: str) -> None:
    # NCBI Gene's protein name "plasminogen activator inhibitor 1"
    assert norm.normalize(name, "gene").normalized_name == "SERPINE1"
    assert norm.normalize("type I collagen", "gene").ontology_id is None  # no subtype of a name


def test_a_withdrawn_symbol_another_gene_goes_by_names_no_one_gene(
    norm: DictionaryNormalizer,
) -> None:
    # "ERK": EPHB2's previous symbol, and one of MAPK1's NCBI Gene synonyms
    r = norm.normalize("ERK", "gene")
    assert (r.ontology_id, r.matched_by) == (None, "ambiguous")
    assert {"HGNC:3393", "HGNC:6871"} <= set(r.candidates)
    text = "ERK, a mitogen-activated protein kinase, was phosphorylated."
    assert norm.normalize("ERK", "gene", text).normalized_name == "MAPK1"
    # a previous symbol no other gene uses keeps its gene
    assert norm.normalize("TNF-a", "gene").normalized_name == "TNF"


def test_a_protein_named_by_its_mass_only_where_its_gene_writes_it(
    norm: DictionaryNormalizer,
) -> None:
    # TP53 is "tumor protein p53"; CDKN2A's protein names write "p16-INK4a"
    assert norm.normalize("p53", "gene").normalized_name == "TP53"
    assert norm.normalize("p16", "gene").normalized_name == "CDKN2A"
    # IFI27's alias "P27" appears in none of its names: many proteins weigh 27 kDa
    assert norm.normalize("p27", "gene").ontology_id is None


def test_an_hgnc_name_without_its_parenthesised_aside(norm: DictionaryNormalizer) -> None:
    # previous name "ubiquitin carboxyl-terminal esterase L1 (ubiquitin thiolesterase)"
    r = norm.normalize("Ubiquitin carboxyl-terminal esterase L1", "gene")
    assert (r.normalized_name, r.matched_by) == ("UCHL1", "prev_name")
    # previous name "AAR2 splicing factor homolog (S. cerevisiae)"
    assert norm.normalize("AAR2 splicing factor homolog", "gene").normalized_name == "AAR2"


@pytest.mark.parametrize(
    ("name", "kind", "expected"),
    [("b-thalassemia", "disease", "D017086"), ("a-tocopherol", "chemical", "D024502"),
     ("g-aminobutyric acid", "chemical", "D005680")],
)  # fmt: skip
def test_a_greek_letter_written_as_its_latin_initial(
    norm: DictionaryNormalizer, name: str, kind: str, expected: str
) -> None:
    assert norm.normalize(name, kind).ontology_id == expected
    assert norm.normalize("B-cell", "chemical").ontology_id is None  # a capital is no beta


@pytest.mark.parametrize(("name", "gene"), [("miR-21", "MIR21"), ("miRNA-21", "MIR21")])
def test_micro_rna_names(norm: DictionaryNormalizer, name: str, gene: str) -> None:
    assert norm.normalize(name, "gene").normalized_name == gene


@pytest.mark.parametrize(
    ("name", "group", "label", "member"),
    [
        ("caspases", "HGNC-GROUP:468", "Caspases", "CASP3"),
        ("interleukins", "HGNC-GROUP:601", "Interleukins", "IL1B"),
        ("toll-like receptors", "HGNC-GROUP:948", "Toll like receptors", "TLR4"),
        # the stem its members' names share ("matrix metalloproteinase 9", ...), not the
        # group's own name
        ("matrix metalloproteinases", "HGNC-GROUP:891", "M10 matrix metallopeptidases", "MMP9"),
    ],
)
def test_a_family_name_is_the_gene_groups_node_never_a_member(
    norm: DictionaryNormalizer, name: str, group: str, label: str, member: str
) -> None:
    result = norm.normalize(name, "gene")
    assert (result.ontology_id, result.normalized_name, result.matched_by) == (
        group,
        label,
        "gene_group",
    )
    assert norm.facts(group)["name"] == label and int(norm.facts(group)["genes"]) > 5
    member_id = norm.normalize(member, "gene").ontology_id
    assert member_id and group in norm.ancestors(member_id)  # a filter on the family finds it


def test_a_stem_members_of_several_groups_share_is_no_family(norm: DictionaryNormalizer) -> None:
    # CYP genes sit in several groups: no one family node
    assert norm.normalize("cytochrome P450", "gene").ontology_id is None
