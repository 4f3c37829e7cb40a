"""What the text says before what the dictionary says: short forms the text defines, and
coordinations of diseases, as case tables (name, type, context -> expected ids, or none)."""

from __future__ import annotations

import pytest

from fastbmrag.vocab import DictionaryNormalizer, load_normalizer


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


def ids(norm: DictionaryNormalizer, name: str, type_: str, context: str) -> tuple[str, ...]:
    r = norm.normalize(name, type_, context)
    return tuple(p.ontology_id or "" for p in r.parts) or (
        (r.ontology_id,) if r.ontology_id else ()
    )


# A defined short form names what its long form names: a gene the letters also spell is not
# given when the long form shares no word with the gene's name.
SHORT_FORMS = [
    # name, type, context, expected ids
    ("T4", "auto", "Serum thyroxine (T4) was measured in all patients.", ("D013974",)),
    ("T4", "chemical", "Serum thyroxine (T4) was measured in all patients.", ("D013974",)),
    ("T4", "gene", "Serum thyroxine (T4) was measured in all patients.", ()),
    ("ANOVA", "auto", "Groups were compared by analysis of variance (ANOVA).", ()),
    ("ANOVA", "gene", "Groups were compared by analysis of variance (ANOVA).", ()),
    ("GC", "gene", "Urine was analysed by gas chromatography (GC) after extraction.", ()),
    ("COX", "gene", "Inhibitors of cyclooxygenase (COX) reduce pain.", ()),
    # nor a gene group whose name shares no word with the long form; one whose name it is stays
    ("VN", "gene", "Sera were titrated by a virus neutralization test (VN) in duplicate.", ()),
    ("TLRs", "gene", "Toll-like receptors (TLRs) were measured.", ("HGNC-GROUP:948",)),
    # the gene's name shares a word with the long form: the gene stays
    (
        "FAS",
        "gene",
        "FS-7 cell-associated cell surface antigen (FAS) was cleaved.",
        ("HGNC:11920",),
    ),
    (
        "VLCAD",
        "gene",
        "very-long-chain acyl-coenzyme A dehydrogenase (VLCAD) deficiency",
        ("HGNC:92",),
    ),  # fmt: skip
    ("IL-6", "gene", "Interleukin-6 (IL-6) rose after surgery.", ("HGNC:6018",)),
    # a cDNA is the gene's: the word before the letters decides nothing
    (
        "DMC1",
        "gene",
        "mutations of meiotic genes, such as disrupted meiotic cDNA (DMC1)",
        ("HGNC:2927",),
    ),  # fmt: skip
    # one capital the text defines stands for its word, not for an element's symbol
    ("H", "chemical", "Mice were given heparin (H) before surgery.", ("D006493",)),
    ("B", "chemical", "Rats received bicarbonate (B) or saline (S) daily.", ("D001639",)),
    ("B", "chemical", "Tables (A) and (B) list the doses.", ("D001895",)),
    # no definition in the text: the dictionary's reading
    ("T4", "gene", "", ("HGNC:1678",)),
    ("H", "chemical", "", ("D006859",)),
]


@pytest.mark.parametrize(("name", "type_", "context", "expected"), SHORT_FORMS)
def test_a_defined_short_form_names_what_its_long_form_names(
    norm: DictionaryNormalizer, name: str, type_: str, context: str, expected: tuple[str, ...]
) -> None:
    assert ids(norm, name, type_, context) == expected


# A coordination of diseases gives one id per part when every part is a term of its own (the
# shared head or modifiers restored); otherwise the name is read whole.
COORDINATIONS = [
    ("breast and ovarian cancer", ("D001943", "D010051")),
    ("type 1 and type 2 diabetes", ("D003922", "D003924")),
    ("endometrial hyperplasia or cancer", ("D004714", "D016889")),
    ("nausea, vomiting and fatigue", ("D009325", "D014839", "D005221")),
    ("Alzheimer's and Parkinson's diseases", ("D000544", "D010300")),
    # a term that holds "and" is one disease
    ("head and neck cancer", ("D006258",)),
    # a part that is a term only through a rewrite: read whole (the last conjunct)
    ("pulmonary and renal insufficiency", ("D051437",)),
]


@pytest.mark.parametrize(("name", "expected"), COORDINATIONS)
def test_a_coordination_of_diseases_gives_one_id_per_part(
    norm: DictionaryNormalizer, name: str, expected: tuple[str, ...]
) -> None:
    assert ids(norm, name, "disease", "") == expected
