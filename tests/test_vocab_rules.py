"""Disease rules of the dictionary normaliser (drug-induced forms, head words, rewrites) and its
memo of context-free results, on the bundled MeSH 2024 data."""

from __future__ import annotations

import pytest

from fastbmrag.vocab import DictionaryNormalizer, load_normalizer


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


ABSTRACT = (
    "Isoniazid-induced hepatotoxicity. Two patients developed hepatitis and dyskinesias "
    "after isoniazid treatment."
)


def test_drug_induced_form_when_the_text_speaks_of_a_drug_effect(
    norm: DictionaryNormalizer,
) -> None:
    r = norm.normalize("hepatitis", "disease", ABSTRACT)
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (
        "Chemical and Drug Induced Liver Injury",
        "D056486",
        "drug_induced",
    )
    r = norm.normalize("dyskinesias", "disease", ABSTRACT)
    assert (r.ontology_id, r.matched_by) == ("D004409", "drug_induced")  # Dyskinesia, Drug-Induced


def test_no_drug_induced_form_without_a_cause(norm: DictionaryNormalizer) -> None:
    assert norm.normalize("hepatitis", "disease").ontology_id == "D006505"  # Hepatitis
    viral = "Chronic hepatitis B virus carriers were followed for ten years."
    assert norm.normalize("hepatitis", "disease", viral).ontology_id == "D006505"
    # A condition with no drug-induced descriptor keeps its own.
    assert norm.normalize("hypotension", "disease", ABSTRACT).ontology_id == "D007022"


def test_induced_by_a_named_substance(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("levodopa-induced dyskinesia", "disease")
    assert (r.normalized_name, r.ontology_id) == ("Dyskinesia, Drug-Induced", "D004409")
    # The condition after "-induced" goes through the organ rules: nephropathy -> kidney.
    r = norm.normalize("contrast media-induced nephropathy", "disease")
    assert (r.normalized_name, r.ontology_id) == ("Kidney Diseases", "D007674")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rigidity", ("Muscle Rigidity", "D009127")),  # most two-word terms hold the word
        ("diabetes", ("Diabetes Mellitus", "D003920")),  # the largest subtree
        ("diabetic", ("Diabetes Mellitus", "D003920")),  # adjective -> noun first
        ("fractures", ("Fractures, Bone", "D050723")),
    ],
)
def test_one_word_completed_to_the_most_general_descriptor(
    norm: DictionaryNormalizer, name: str, expected: tuple[str, str]
) -> None:
    r = norm.normalize(name, "disease")
    assert (r.normalized_name, r.ontology_id) == expected
    assert r.matched_by == "head"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # a sign or complaint head -> "disorder"/"disease"
        ("extrapyramidal symptoms", ("Basal Ganglia Diseases", "D001480")),
        ("memory impairment", ("Memory Disorders", "D008569")),
        # tumour words -> neoplasm, organ adjectives -> organ nouns
        ("liver tumors", ("Liver Neoplasms", "D008113")),
        ("gastric adenocarcinoma", ("Stomach Neoplasms", "D013274")),
        # organ combining forms
        ("myelosuppression", ("Bone Marrow Diseases", "D001855")),
        # inflections and derivations of the last word
        ("bruising", ("Contusions", "D003288")),
        ("HIV-infected", ("HIV Infections", "D015658")),
        ("obese", ("Obesity", "D009765")),
    ],
)
def test_rewrites_towards_mesh_wording(
    norm: DictionaryNormalizer, name: str, expected: tuple[str, str]
) -> None:
    r = norm.normalize(name, "disease")
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (*expected, "variant")


def test_plural_short_form_defines_the_singular(norm: DictionaryNormalizer) -> None:
    context = "NSAIDs induce ventricular septal defects (VSDs) in rats; one VSD was large."
    r = norm.normalize("VSD", "disease", context)
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (
        "Heart Septal Defects, Ventricular",
        "D006345",
        "abbreviation",
    )


def test_mental_disorders_are_marked_in_the_table(norm: DictionaryNormalizer) -> None:
    cats = {row[0]: row[2] for row in norm._desc}
    assert cats["D003866"] == "CF"  # Depressive Disorder: F03 only, still a disease
    assert cats["D007022"] == "C"  # Hypotension


def test_context_free_results_are_memoised(norm: DictionaryNormalizer) -> None:
    fresh = DictionaryNormalizer(
        {"genes": norm._genes, "index": norm._gene_index},
        {
            "descriptors": norm._desc,
            "index": norm._mesh_index,
            "bag": norm._mesh_bag,
            "head": norm._mesh_head,
            "drug_induced": norm._drug_induced,
        },
        norm.manifest,
    )
    first = fresh.normalize("Endometrioma", "disease")
    second = fresh.normalize("Endometrioma", "disease")
    assert first is second
    assert first.ontology_id == "D004715"
    assert fresh._free.cache_info().hits == 1
    # With a context the memoised lookup is reused, and the result is the same.
    assert fresh.normalize("Endometrioma", "disease", "An ovarian cyst.") == first
    assert fresh._match_free.cache_info().hits >= 1
