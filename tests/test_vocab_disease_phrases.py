"""Disease phrases that MeSH words otherwise (an impaired function, an adjective before its
head, a quantity on a measure, a part of an organ, the loss of a tissue, a combining form), each
on real MeSH 2024 entries of the bundled data."""

from __future__ import annotations

import pytest

from fastbmrag.vocab import DictionaryNormalizer, load_normalizer


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


@pytest.mark.parametrize(
    ("name", "mesh_id"),
    [
        ("impairment of ventricular function", "D018754"),  # Ventricular Dysfunction
        ("loss of kidney function", "D051437"),  # Renal Insufficiency
        ("thyroid function abnormalities", "D013959"),  # Thyroid Diseases
        ("deterioration of cognitive functions", "D003072"),  # Cognition Disorders
        ("impaired cognitive function", "D003072"),
    ],
)
def test_impaired_function_in_any_word_order(
    norm: DictionaryNormalizer, name: str, mesh_id: str
) -> None:
    r = norm.normalize(name, "disease")
    assert (r.ontology_id, r.matched_by) == (mesh_id, "rewrite")


@pytest.mark.parametrize(
    ("name", "mesh_id"),
    [
        ("neuronal degeneration", "D009410"),  # Nerve Degeneration ("Neuron Degeneration")
        ("olfactory disorders", "D000857"),  # Olfaction Disorders
        ("dry mouth", "D014987"),  # Xerostomia ("Mouth Dryness")
    ],
)
def test_adjective_before_the_head_as_its_noun(
    norm: DictionaryNormalizer, name: str, mesh_id: str
) -> None:
    r = norm.normalize(name, "disease")
    assert (r.ontology_id, r.matched_by) == (mesh_id, "rewrite")


@pytest.mark.parametrize(
    ("name", "mesh_id"),
    [
        ("prolonged QT interval", "D008133"),  # Long QT Syndrome
        ("prolongation of the QT interval", "D008133"),
        ("decrease in diastolic blood pressure", "D007022"),  # Hypotension ("Low Blood Pressure")
        ("rise in arterial blood pressure", "D006973"),  # Hypertension ("High Blood Pressure")
    ],
)
def test_quantity_on_the_measure_without_its_modifiers(
    norm: DictionaryNormalizer, name: str, mesh_id: str
) -> None:
    r = norm.normalize(name, "disease")
    assert (r.ontology_id, r.matched_by) == (mesh_id, "rewrite")


def test_site_one_word_short_of_a_descriptor_name(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("platelet aggregation", "disease")
    assert (r.normalized_name, r.ontology_id) == ("Blood Platelet Disorders", "D001791")
    assert norm.normalize("marrow suppression", "disease").ontology_id == "D001855"
    # Only a descriptor whose name ends in the site and its head: "neuronal disorder" is one
    # word short of "Neuronal Migration Disorders", a term of another descriptor's.
    assert norm.normalize("neuronal dysfunction", "disease").ontology_id is None


def test_part_of_an_organ_as_the_organ(norm: DictionaryNormalizer) -> None:
    assert norm.normalize("visual field loss", "disease").ontology_id == "D014786"  # Vision D.
    assert norm.normalize("renal tissue damage", "disease").ontology_id == "D007674"  # Kidney D.
    # Modifiers that name a disease keep it: Hypertension, Pulmonary.
    assert norm.normalize("pulmonary hypertension syndrome", "disease").ontology_id == "D006976"


def test_loss_of_tissue_as_its_degeneration(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("neuronal loss", "disease")
    assert (r.normalized_name, r.ontology_id) == ("Nerve Degeneration", "D009410")
    assert norm.normalize("neuronal death", "disease").ontology_id == "D009410"


def test_combining_form_and_a_disease_word(norm: DictionaryNormalizer) -> None:
    # "Immunodeficiency 5" (a numbered subtype, under Lymphoproliferative Disorders) no
    # longer completes the word; the combining form does: immunologic deficiency (syndrome).
    r = norm.normalize("immunodeficiency", "disease")
    assert (r.normalized_name, r.ontology_id) == ("Immunologic Deficiency Syndromes", "D007153")
    assert norm.normalize("myonecrosis", "disease").ontology_id == "D009135"  # Muscular Diseases
    # The rest must be a word of some MeSH term.
    assert norm.normalize("myoclonia", "disease").ontology_id is None


@pytest.mark.parametrize(
    ("name", "mesh_id"),
    [
        ("rheumatologic disease", "D012216"),  # Rheumatic Diseases (-ologic as -ic)
        ("impaired memory functioning", "D008569"),  # Memory Disorders
    ],
)
def test_more_derived_forms(norm: DictionaryNormalizer, name: str, mesh_id: str) -> None:
    r = norm.normalize(name, "disease")
    assert (r.ontology_id, r.matched_by) == (mesh_id, "rewrite")


def test_head_word_of_a_longer_name_completed(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("impaired overnight memory", "disease")
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (
        "Memory Disorders",
        "D008569",
        "head",
    )
    # ... never adding a word the name lacks other than one for disease
    for name in ("axonal degeneration", "ureteric obstruction", "cardiorespiratory arrest"):
        assert norm.normalize(name, "disease").ontology_id is None, name
    # a head several diseases complete gives no id: Muscle Rigidity, Decerebrate State
    assert norm.normalize("truncal rigidity", "disease").ontology_id is None
    assert norm.normalize("blurred vision", "disease").ontology_id == "D014786"  # Vision D.
    # Only to a descriptor named by the head word: "pressure" completes to Pressure Ulcer,
    # whose head is "ulcer".
    assert norm.normalize("elevated intraocular pressure", "disease").ontology_id is None
