"""Disease rules of the dictionary normaliser (drug-induced forms, head words, rewrites) and its
memo of context-free results, on the bundled MeSH 2024 data."""

from __future__ import annotations

from pathlib import Path

import pytest

from fastbmrag.papers import read_jats
from fastbmrag.vocab import DictionaryNormalizer, load_normalizer
from fastbmrag.vocab.loading import BUNDLED_DIR


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


ABSTRACT = (
    "Isoniazid-induced hepatotoxicity. Two patients developed hepatitis and dyskinesias, and "
    "one was dyskinetic, after administration of isoniazid."
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


def test_a_cue_in_another_sentence_says_nothing_of_the_condition(
    norm: DictionaryNormalizer,
) -> None:
    # The cause must be in the name ("X-induced") or in the sentence that names the condition.
    text = (
        "IL-1 beta induces inflammation. Serum IL-1 beta was raised in patients with hepatitis. "
        "Adverse effects of the antiviral drugs were recorded."
    )
    r = norm.normalize("hepatitis", "disease", text)
    assert (r.ontology_id, r.matched_by) == ("D006505", "name")  # Hepatitis
    # A protein that induces a condition is not a drug either.
    assert norm.normalize("hepatitis", "disease", "IL-1 beta induces hepatitis.").ontology_id == (
        "D006505"
    )


@pytest.mark.parametrize(
    "name, expected",
    [
        # the name says a virus caused it: Hepatitis would drop most of it, so no id
        ("viral hepatitis", None),
        ("autoimmune hepatitis", "D019693"),  # Hepatitis, Autoimmune
        ("alcoholic liver disease", "D008108"),  # Liver Diseases, Alcoholic
        ("radiation-induced pneumonitis", "D017564"),  # Radiation Pneumonitis
    ],
)
def test_no_drug_induced_form_when_the_name_gives_another_cause(
    norm: DictionaryNormalizer, name: str, expected: str | None
) -> None:
    r = norm.normalize(name, "disease", ABSTRACT)  # a text about a drug's effects
    assert r.ontology_id == expected and r.matched_by != "drug_induced", r


@pytest.mark.parametrize(
    ("name", "candidates"),
    [("rigidity", {"D009127", "D003655"}),  # Muscle Rigidity, Decerebrate State
     ("glomerulosclerosis", {"D003928", "D005923"})],  # Diabetic Nephropathies, FSGS
)  # fmt: skip
def test_one_word_several_diseases_complete_is_ambiguous(
    norm: DictionaryNormalizer, name: str, candidates: set[str]
) -> None:
    r = norm.normalize(name, "disease")
    assert (r.ontology_id, r.matched_by) == (None, "ambiguous")
    assert set(r.candidates) == candidates


def test_mental_disorders_are_marked_in_the_table(norm: DictionaryNormalizer) -> None:
    cats = {row[0]: row[2] for row in norm.desc}
    assert cats["D003866"] == "CF"  # Depressive Disorder: F03 only, still a disease
    assert cats["D007022"] == "C"  # Hypotension


def test_context_free_results_are_memoised(norm: DictionaryNormalizer) -> None:
    fresh = DictionaryNormalizer.from_dir(BUNDLED_DIR)  # not the loader's shared one
    first = fresh.normalize("Endometrioma", "disease")
    second = fresh.normalize("Endometrioma", "disease")
    assert first is second
    assert first.ontology_id == "D004715"
    assert fresh._free.cache_info().hits == 1
    # With a context the memoised lookup is reused, and the result is the same.
    assert fresh.normalize("Endometrioma", "disease", "An ovarian cyst.") == first
    assert fresh._match_free.cache_info().hits >= 1


# ---- context rules ---------------------------------------------------------------------------


def test_drug_induced_form_of_the_descriptor_found(norm: DictionaryNormalizer) -> None:
    # "dyskinetic" -> Dyskinesias (a derived form), then its drug-induced descriptor.
    r = norm.normalize("dyskinetic", "disease", ABSTRACT)
    assert (r.ontology_id, r.matched_by) == ("D004409", "drug_induced")
    # The one drug-induced child named like its parent: Congenital Abnormalities ->
    # Abnormalities, Drug-Induced.
    text = "Antibacterial drug use in pregnancy: drug-induced birth defects were recorded."
    assert norm.normalize("birth defects", "disease", text).ontology_id == "D000014"
    assert norm.normalize("birth defects", "disease").ontology_id == "D000013"
    # "reactions to <drug>" speaks of a drug's effect: Hypersensitivity -> Drug Hypersensitivity.
    r = norm.normalize(
        "allergic reactions", "disease", "Immediate allergic reactions to amoxicillin."
    )
    assert (r.normalized_name, r.ontology_id) == ("Drug Hypersensitivity", "D004342")
    assert norm.normalize("allergic reactions", "disease", "Allergies.").ontology_id == "D006967"


def test_head_completion_chosen_by_the_context(norm: DictionaryNormalizer) -> None:
    # Hyperkinesis ("Motor Hyperactivity") and Psychomotor Agitation ("Psychomotor
    # Hyperactivity") are siblings under Dyskinesias; "locomotor" is a kind of "motor".
    text = "Amphetamine-induced hyperactivity: the locomotor activity of rats was recorded."
    r = norm.normalize("hyperactivity", "disease", text)
    assert (r.normalized_name, r.ontology_id, r.matched_by) == ("Hyperkinesis", "D006948", "head")
    r = norm.normalize("hyperactivity", "disease")  # no context: both siblings, no id
    assert (r.ontology_id, set(r.candidates)) == (None, {"D011595", "D006948"})
    # A context word naming a more specific, non-sibling descriptor does not override.
    r = norm.normalize("diabetes", "disease", "Experimental complications were studied.")
    assert r.ontology_id == "D003920"  # Diabetes Mellitus


def test_abbreviation_spelt_out_by_words_of_the_text(norm: DictionaryNormalizer) -> None:
    text = (
        "Therapy-induced acute liver failure in South Asia. We saw 1223 consecutive ALF patients."
    )
    r = norm.normalize("ALF", "disease", text)
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (
        "Liver Failure, Acute",
        "D017114",
        "abbreviation",
    )
    assert norm.normalize("ALF", "disease").ontology_id is None
    assert norm.normalize("ALF", "disease", "Liver tests in 40 ALF patients.").ontology_id is None


def test_a_phrase_that_spells_a_short_form_only_by_chance_does_not_define_it(
    norm: DictionaryNormalizer,
) -> None:
    # another short form spells none ("DOPAC" is no long form of "DA")
    text = "No change in striatal DA and DOPAC concentration."
    assert norm.normalize("DA", "chemical", text).ontology_id is None
    # the phrase ends at the word holding the last letter: "kainate", not "kainate receptor"
    r = norm.normalize("KA", "chemical", "Mice lacking the kainate receptor had seizures; KA.")
    assert (r.normalized_name, r.via) == ("Kainic Acid", "kainate")
    # and starts with no function word
    r = norm.normalize("TPA", "chemical", "PAK2 binds to small GTPases; TPA activated it.")
    assert r.via != "to small GTPases"


def test_defined_short_form_inside_a_name(norm: DictionaryNormalizer) -> None:
    text = "Patients with hepatitis B virus (HBV) were followed for ten years."
    r = norm.normalize("HBV infection", "disease", text)
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (
        "Hepatitis B",
        "D006509",
        "abbreviation",
    )
    assert norm.normalize("HBV infection", "disease").ontology_id is None


def test_course_word_on_a_term_is_not_completed_to_a_longer_term(
    norm: DictionaryNormalizer,
) -> None:
    # "acute myocardial infarction" is one word short of "Acute Inferior Myocardial
    # Infarction", but "acute" only qualifies the term Myocardial Infarction.
    r = norm.normalize("acute myocardial infarction", "disease")
    assert (r.normalized_name, r.ontology_id) == ("Myocardial Infarction", "D009203")


def test_hyphen_inside_a_word(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("venous thrombo-embolism", "disease")
    assert (r.normalized_name, r.ontology_id, r.matched_by) == (
        "Venous Thromboembolism",
        "D054556",
        "name",
    )


# ---- morphology and MeSH wording ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mesh_id"),
    [
        ("migraineurs", "D008881"),  # -eur person noun -> Migraine Disorders
        ("epileptiform activity", "D004827"),  # -iform as -ic -> Epilepsy
        ("psychomotor retardation", "D011596"),  # the site's disorder -> Psychomotor Disorders
        ("cardiovascular malformations", "D018376"),  # -> Cardiovascular Abnormalities
        ("cytotoxicity", "D064420"),  # head of the compound -> Drug Toxicity (entry term)
        ("hematotoxicity", "D006402"),  # hemato- -> Hematologic Diseases
        ("leucocytoclastic vasculitis", "D018366"),  # leuc- spelt leuk-
    ],
)
def test_suffixes_and_combining_forms(norm: DictionaryNormalizer, name: str, mesh_id: str) -> None:
    assert norm.normalize(name, "disease").ontology_id == mesh_id


def test_leuc_spelling_folds_both_sides(norm: DictionaryNormalizer) -> None:
    # The descriptor names keep their own spelling; both spellings find them.
    assert norm.normalize("leucine", "chemical").normalized_name == "Leucine"
    assert norm.normalize("Leucovorin", "chemical").ontology_id == "D002955"
    assert norm.normalize("leucopenia", "disease").normalized_name == "Leukopenia"


def test_toxic_alone_does_not_make_a_term_drug_induced(norm: DictionaryNormalizer) -> None:
    # "Toxic Encephalopathy" (Neurotoxicity Syndromes) names no drug: in a text on a drug's
    # effects "encephalopathy" stays Brain Diseases; "hepatitis" still becomes the drug-induced
    # liver injury its entry term "Hepatitis, Drug-Induced" names.
    assert norm.normalize("encephalopathy", "disease", ABSTRACT).ontology_id == "D001927"
    assert norm.normalize("optic neuropathy", "disease", ABSTRACT).ontology_id == "D009901"
    assert norm.normalize("hepatitis", "disease", ABSTRACT).ontology_id == "D056486"


def test_british_plural_spelling(norm: DictionaryNormalizer) -> None:
    assert norm.normalize("tumours", "disease").ontology_id == "D009369"  # Neoplasms
    assert norm.normalize("bladder tumours", "disease").ontology_id == "D001749"


@pytest.mark.parametrize(
    ("name", "mesh_id"),
    [
        ("veno-occlusive disease of the liver", "D006504"),  # liver -> hepatic
        ("central nervous system (CNS) complications", "D002493"),  # aside dropped
        ("overdosage", "D062787"),  # -age -> Drug Overdose
        ("purpuric lesions", "D011693"),  # -ic -> -a: Purpura
        ("supraventricular tachyarrhythmias", "D013617"),  # head as its descriptor's name
        ("parkinsonian", "D010300"),  # parkinson + disease before parkinsonian + disorder
    ],
)
def test_asides_suffixes_and_heads_towards_mesh_wording(
    norm: DictionaryNormalizer, name: str, mesh_id: str
) -> None:
    assert norm.normalize(name, "disease").ontology_id == mesh_id


def test_drug_cause_cues_in_the_text(norm: DictionaryNormalizer) -> None:
    given = "Akathisia after administration of intravenous prochlorperazine was recorded."
    assert norm.normalize("akathisia", "disease", given).ontology_id == "D017109"
    exposed = "Acute hepatitis after exposure to isoflurane in a healthy woman."
    assert norm.normalize("hepatitis", "disease", exposed).ontology_id == "D056486"
    # Without such a cue, the condition itself.
    assert norm.normalize("akathisia", "disease", "Akathisia was rated.").ontology_id == "D011595"


@pytest.mark.parametrize(
    ("name", "mesh_id"),
    [
        ("cholestatic disease", "D002779"),  # adjective + "disease" -> Cholestasis
        ("impaired consciousness", "D003244"),  # -> Consciousness Disorders
        ("drug dependency", "D019966"),  # -ency -> -ence: Substance-Related Disorders
    ],
)
def test_an_adjective_and_a_disease_word_as_its_noun(
    norm: DictionaryNormalizer, name: str, mesh_id: str
) -> None:
    assert norm.normalize(name, "disease").ontology_id == mesh_id


# ---- names once given a wrong id: each now right or without one --------------------------------


def test_hepatitis_beside_a_protein_that_induces_inflammation(norm: DictionaryNormalizer) -> None:
    text = "IL-1 beta induces inflammation. IL-1 beta levels were raised in hepatitis."
    r = norm.normalize("hepatitis", "disease", text)
    assert (r.ontology_id, r.normalized_name) == ("D006505", "Hepatitis")


def test_a_congener_is_not_its_class_nor_its_parent_ether(norm: DictionaryNormalizer) -> None:
    # The real paper: "dietary exposure to 2,2',4,4'-tetrabromodiphenyl ether (PBDE-47)". MeSH
    # has the class (Halogenated Diphenyl Ethers, "PBDEs") and Ether (diethyl ether) as
    # descriptors, and the congener as a supplementary concept: that one, in the paper as on
    # its own.
    paper = read_jats(Path(__file__).parent / "data" / "pmc" / "ehp-116-1694.nxml")
    for context in (f"{paper.title}\n{paper.abstract}", ""):
        r = norm.normalize("PBDE-47", "chemical", context)
        assert r.ontology_id == "C511295", r
    r = norm.normalize("2,2',4,4'-tetrabromodiphenyl ether", "chemical")
    assert (r.ontology_id, r.matched_by) == ("C511295", "supplementary_name")


def test_lung_nodules_are_not_one_solitary_nodule(norm: DictionaryNormalizer) -> None:
    # "lung nodule" is one word short of Solitary Lung Nodule, and "pulmonary nodule" of
    # Multiple Pulmonary Nodules too: neither is given without the context; both are Lung
    # Diseases, which the site and its lesion name.
    for name in ("lung nodules", "pulmonary nodules"):
        r = norm.normalize(name, "disease")
        assert (r.ontology_id, r.normalized_name) == ("D008171", "Lung Diseases"), r
    text = "Multiple lung nodules were seen on computed tomography."
    assert norm.normalize("lung nodules", "disease", text).ontology_id == "D055613"
    assert norm.normalize("solitary lung nodule", "disease").ontology_id == "D003074"


def test_an_unknown_gene_short_form_is_not_a_protein_class(norm: DictionaryNormalizer) -> None:
    text = (
        "the TH-responsive transcription factor basic transcription element-binding protein "
        "(BTEB) in the brain"
    )
    for context in (text, ""):
        r = norm.normalize("BTEB", "gene", context)
        assert r.ontology_id is None and r.normalized_name == "BTEB", r


def test_what_follows_without_is_absent(norm: DictionaryNormalizer) -> None:
    # order-free keys keep the sides of "without": no "Migraine Aura without Headache"
    assert norm.normalize("headache without aura", "disease").ontology_id is None
    assert norm.normalize("aura without headache", "disease").normalized_name == (
        "Migraine with Aura"
    )
    # the part offered is the head, not what is said to be absent
    r = norm.normalize("hypertension without proteinuria", "disease")
    assert (r.ontology_id, r.candidates) == (None, ("D006973",))  # Hypertension
    # the words before an unaligned short form stop at "without"
    text = "25 with major depression without panic attacks (MD) and 28 healthy volunteers."
    assert norm.normalize("MD", "disease", text).ontology_id is None


@pytest.mark.parametrize(
    "name", ["heart rate", "blood pressure", "renal blood flow", "liver weight"]
)
def test_a_measure_of_a_site_is_no_disease_of_it(norm: DictionaryNormalizer, name: str) -> None:
    assert norm.normalize(name, "disease").ontology_id is None
    # while a pathologic process at the site is: "bladder inflammation" -> bladder disease
    assert norm.normalize("bladder inflammation", "disease").ontology_id == "D001745"


def test_a_process_in_tissue_is_no_mental_disorder(norm: DictionaryNormalizer) -> None:
    # "reactive disorder" is an entry term of Adjustment Disorders; "reactive" names no site
    # of the gliosis, so the site stage gives nothing and the part does
    r = norm.normalize("reactive astrogliosis", "disease")
    assert (r.ontology_id, r.normalized_name) == ("D005911", "Gliosis")
    assert norm.normalize("reactive disorder", "disease").normalized_name == "Adjustment Disorders"
