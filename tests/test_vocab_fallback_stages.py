"""Case tables of the normaliser's fallback stages (``FALLBACKS`` in vocab/fallback.py): each row
is a disease name, the MeSH id expected (None: no id) and the stage that must decide, on real
MeSH 2024 entries of the bundled data. A rule is a row here, not a test function."""

from __future__ import annotations

import pytest

from fastbmrag.vocab import DictionaryNormalizer, load_normalizer

# stage -> [(name, expected MeSH id or None, what the row shows)]
CASES: dict[str, list[tuple[str, str | None, str]]] = {
    # a derived form of the last word
    "derived": [
        ("bruising", "D003288", "Contusions"),
        ("hypertrophied", "D006984", "Hypertrophy"),
        ("HIV-infected", "D015658", "HIV Infections"),
        ("obese", "D009765", "Obesity"),
        ("asystolic", "D006323", "Heart Arrest"),
        ("edematous", "D004487", "Edema"),
        ("painful", "D010146", "Pain"),
        ("thrombi", "D013927", "Thrombosis"),
    ],
    # a rewrite towards MeSH's wording
    "rewrite": [
        ("extrapyramidal symptoms", "D001480", "Basal Ganglia Diseases"),
        ("memory impairment", "D008569", "Memory Disorders"),
        ("liver tumors", "D008113", "Liver Neoplasms"),
        ("liver metastasis", "D008113", "Liver Neoplasms"),
        ("gastric adenocarcinoma", "D013274", "Stomach Neoplasms"),
        ("benign prostate hyperplasia", "D011470", "Prostatic Hyperplasia"),
        ("thyroid illness", "D013959", "Thyroid Diseases"),
        ("adenovirus disease", "D000257", "Adenoviridae Infections"),
        ("syncopal attacks", "D013575", "Syncope"),
        ("tic-like symptoms", "D013981", "Tic Disorders"),
        ("elevated blood pressure", "D006973", "Hypertension"),
        ("QT prolongation", "D008133", "Long QT Syndrome"),
        ("decreased cardiac output", "D002303", "Cardiac Output, Low"),
        ("drop in blood pressure", "D007022", "Hypotension"),
        ("decreased renal function", "D051437", "Renal Insufficiency"),
        ("calcification of the artery", "D061205", "Vascular Calcification"),
        ("bone marrow suppression", "D001855", "Bone Marrow Diseases"),
        ("impairment of ventricular function", "D018754", "Ventricular Dysfunction"),
        ("loss of kidney function", "D051437", "Renal Insufficiency"),
        ("thyroid function abnormalities", "D013959", "Thyroid Diseases"),
        ("deterioration of cognitive functions", "D003072", "Cognition Disorders"),
        ("impaired cognitive function", "D003072", "Cognition Disorders"),
        ("neuronal degeneration", "D009410", "Nerve Degeneration (neuron degeneration)"),
        ("olfactory disorders", "D000857", "Olfaction Disorders"),
        ("dry mouth", "D014987", "Xerostomia (mouth dryness)"),
        ("prolonged QT interval", "D008133", "Long QT Syndrome"),
        ("prolongation of the QT interval", "D008133", "Long QT Syndrome"),
        ("decrease in diastolic blood pressure", "D007022", "Hypotension (low blood pressure)"),
        ("rise in arterial blood pressure", "D006973", "Hypertension (high blood pressure)"),
        ("neuronal loss", "D009410", "Nerve Degeneration: the loss of a tissue"),
        ("neuronal death", "D009410", "Nerve Degeneration"),
        ("immunodeficiency", "D007153", "Immunologic Deficiency Syndromes, not Immunodeficiency 5"),
        ("myonecrosis", "D009135", "Muscular Diseases: a combining form"),
        ("rheumatologic disease", "D012216", "Rheumatic Diseases (-ologic as -ic)"),
        ("impaired memory functioning", "D008569", "Memory Disorders"),
    ],
    # one word short of a term
    "completion": [
        ("variant angina", "D000788", "Angina Pectoris, Variant"),
        ("Duchenne dystrophy", "D020388", "Muscular Dystrophy, Duchenne"),
        ("stress incontinence", "D014550", "Urinary Incontinence, Stress"),
        ("platelet aggregation", "D001791", "Blood Platelet Disorders"),
        ("marrow suppression", "D001855", "Bone Marrow Diseases"),
    ],
    # an organ's damage as the organ's disease
    "organ": [
        ("myelosuppression", "D001855", "Bone Marrow Diseases"),
        ("retinopathy", "D012164", "Retinal Diseases"),
    ],
    # a head that only says its site is diseased
    "site": [
        ("bladder inflammation", "D001745", "Urinary Bladder Diseases"),
        ("cardiovascular toxicity", "D002318", "Cardiovascular Diseases"),
        ("visual field loss", "D014786", "Vision Disorders: a part of an organ as the organ"),
        ("renal tissue damage", "D007674", "Kidney Diseases"),
    ],
    # one conjunct of a coordination
    "conjunct": [
        ("pulmonary and renal insufficiency", "D051437", "Renal Insufficiency"),
    ],
    # a head word completed
    "head": [
        ("impaired overnight memory", "D008569", "Memory Disorders: the head of a longer name"),
        ("blurred vision", "D014786", "Vision Disorders"),
    ],
    # a part of the name
    "partial": [
        (
            "pulmonary hypertension syndrome",
            "D006976",
            "Hypertension, Pulmonary: modifiers naming a disease keep it",
        ),
    ],
    # no id: the stage that would apply must not
    "none": [
        ("neuronal dysfunction", None, "one word short of another descriptor's term only"),
        ("myoclonia", None, "the rest of a combining form must be a word of some term"),
        ("axonal degeneration", None, "would add a word the name lacks: Retinal Degeneration"),
        ("ureteric obstruction", None, "would add a word the name lacks: Intestinal Obstruction"),
        ("cardiorespiratory arrest", None, "would add a word the name lacks"),
        ("truncal rigidity", None, "several diseases complete the head"),
        ("elevated intraocular pressure", None, "Pressure Ulcer's head is ulcer, not pressure"),
    ],
}


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


@pytest.mark.parametrize(
    ("stage", "name", "mesh_id"),
    [(stage, name, mesh_id) for stage, rows in CASES.items() for name, mesh_id, _ in rows],
)
def test_fallback_stage(
    norm: DictionaryNormalizer, stage: str, name: str, mesh_id: str | None
) -> None:
    r = norm.normalize(name, "disease")
    assert (r.ontology_id, r.matched_by) == (mesh_id, stage)
