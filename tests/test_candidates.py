"""Word weights and abstention for names whose only term is a part of them."""

from __future__ import annotations

import math

import pytest

from fastbmrag.vocab import DictionaryNormalizer, load_normalizer
from fastbmrag.vocab.rules.candidates import (
    MIN_COVERAGE,
    Spellings,
    WordWeights,
    partial_score,
    too_partial,
    word_weights,
)


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


def test_word_weights_from_the_terms_rarity_and_pairs() -> None:
    terms = {
        "bupropion": {1},
        "bupropion hydrochloride": {1},  # adding the word keeps the concept
        "neoplasm": {3},
        "liver neoplasm": {4},  # adding the word makes another concept
        "liver": {2},
    }
    table = word_weights(terms)
    n = len(terms) + 1
    idf = {w: math.log(n / (k + 1)) + 1 for w, k in
           {"bupropion": 2, "hydrochloride": 1, "neoplasm": 2, "liver": 2}.items()}  # fmt: skip
    w = table["weights"]
    assert w["hydrochloride"] == round(idf["hydrochloride"] * 1 / 2, 3)  # 1 pair, the same
    assert w["liver"] == round(idf["liver"] * 2 / 2, 3)  # 1 pair, another concept
    assert w["neoplasm"] == round(idf["neoplasm"] * 2 / 2, 3)  # "liver" -> "liver neoplasm"
    assert w["bupropion"] == round(idf["bupropion"], 3)  # no pair: rarity alone
    assert table["unseen"] == round(math.log(n) + 1, 3)
    weights = WordWeights(table)
    assert weights.weight("never") == table["unseen"] > weights.weight("liver")
    assert weights.coverage(["bupropion", "hydrochloride"], ["bupropion"]) == pytest.approx(
        w["bupropion"] / (w["bupropion"] + w["hydrochloride"])
    )
    assert weights.coverage([], ["x"]) == 0.0


def test_bundled_weights_say_which_words_change_the_concept(norm: DictionaryNormalizer) -> None:
    weights = norm.word_weights
    # MeSH lists "X Hydrochloride" under X and "Familial X" under X; "Hepatic X", "Lung X"
    # are concepts of their own.
    assert weights.weight("hydrochloride") < 0.1 * weights.weight("hepatic")
    assert weights.weight("familial") < weights.weight("lung")


def test_a_part_carrying_too_little_of_a_disease_name_gives_no_id(
    norm: DictionaryNormalizer,
) -> None:
    r = norm.normalize("forestomach tumors", "disease")
    assert (r.ontology_id, r.matched_by, r.normalized_name) == (
        None, "abstained", "forestomach tumors"
    )  # fmt: skip
    assert r.candidates == ("D009369",)  # Neoplasms, offered, not given
    assert too_partial(r.score, "disease")
    # a modifier that says little keeps the part's id
    r = norm.normalize("severe hypotension", "disease")
    assert (r.ontology_id, r.matched_by) == ("D007022", "partial")
    assert r.score >= partial_score(MIN_COVERAGE["disease"])
    # a chemical's part stands for it at a lower share: a salt names its substance
    r = norm.normalize("bupropion HCl", "chemical")
    assert (r.ontology_id, r.matched_by) == ("D016642", "partial")
    r = norm.normalize("hydrogen cyanamide", "chemical")
    assert (r.ontology_id, r.matched_by) == ("D003484", "partial")  # Cyanamide
    assert not too_partial(r.score, "chemical") and too_partial(r.score, "disease")
    # ... but not a cation for a salt whose anion carries the name
    r = norm.normalize("sodium 3-sulfanylpropanesulfonate", "chemical")
    assert (r.ontology_id, r.matched_by, r.candidates) == (None, "abstained", ("D012964",))
    # with auto types, the abstention still holds
    assert norm.normalize("forestomach tumors").ontology_id is None


@pytest.mark.parametrize("name", ["PBDE-99", "PBDE 99"])
def test_a_code_without_its_number_gives_no_id(norm: DictionaryNormalizer, name: str) -> None:
    # "PBDEs" is a MeSH term (Halogenated Diphenyl Ethers); the number says which congener,
    # one MeSH does not list (PBDE-47 it lists, as a supplementary concept)
    r = norm.normalize(name, "chemical")
    assert (r.ontology_id, r.matched_by, r.candidates) == (None, "abstained", ("D055768",))
    r = norm.normalize(name.replace("99", "47"), "chemical")
    assert (r.ontology_id, r.matched_by) == ("C511295", "supplementary_term")
    # a code MeSH lists keeps its id
    assert norm.normalize("MK-801", "chemical").ontology_id == "D016291"  # Dizocilpine Maleate


def test_spellings_allow_one_edit_per_ten_letters_at_the_least_distance() -> None:
    terms = Spellings(["epirubicin", "epirubicins", "doxorubicin", "dysgeusia", "asthma"])
    assert terms.nearest("epirubicine") == ["epirubicin", "epirubicins"]  # both one edit away
    assert terms.nearest("dysguesia") == ["dysgeusia"]  # two letters swapped: one edit
    assert terms.nearest("asthmx") == ["asthma"]
    assert terms.nearest("asthm") == []  # under six letters: no guess
    assert terms.nearest("xpirubicin") == []  # the first two letters as written
    assert terms.nearest("epirubxxxn") == []  # three edits in ten letters


@pytest.mark.parametrize(
    ("name", "kind", "expected"),
    [("epirubicine", "chemical", "D015251"), ("methothexate", "chemical", "D008727"),
     ("dysguesia", "disease", "D004408"), ("bradycardiac", "disease", "D001919")],
)  # fmt: skip
def test_a_misspelled_name_gets_the_term_it_misspells(
    norm: DictionaryNormalizer, name: str, kind: str, expected: str
) -> None:
    r = norm.normalize(name, kind)
    assert (r.ontology_id, r.matched_by) == (expected, "spelling")
    # a name of the other kind finds nothing there
    assert norm.normalize(name, "chemical" if kind == "disease" else "disease").matched_by != (
        "spelling"
    )


def test_a_one_word_completion_is_offered_for_a_disease_given_for_a_chemical(
    norm: DictionaryNormalizer,
) -> None:
    r = norm.normalize("weakness", "disease")  # the only two-word term: Muscle Weakness
    assert (r.ontology_id, r.matched_by, r.candidates) == (None, "abstained", ("D018908",))
    r = norm.normalize("ecstasy", "chemical")  # "Ecstasy (Drug)": the word names the substance
    assert (r.ontology_id, r.matched_by) == ("D018817", "extend")


@pytest.mark.parametrize(
    "word",
    [
        "cannabis",  # only "Medical Cannabis" (Medical Marijuana): a word before it narrows it
        "LPS",  # only "LPS Receptor" (Lipopolysaccharide Receptors): another molecule
        "sulfonylurea",  # "Sulfonylurea Compounds", but also "Sulfonylurea Receptors"
    ],
)
def test_a_chemical_word_is_not_completed_to_a_use_or_to_what_acts_on_it(
    norm: DictionaryNormalizer, word: str
) -> None:
    assert norm.normalize(word, "chemical").ontology_id is None


def test_a_part_keeps_the_other_parts_as_runners_up(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("lung adenocarcinoma metastasis", "disease")
    assert (r.ontology_id, r.matched_by) == ("D000077192", "partial")  # Adenocarcinoma of Lung
    # Neoplasm Metastasis, Adenocarcinoma: the other parts that are terms
    assert r.candidates == ("D000077192", "D009362", "D000230")


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("iron dextran", ("D003911", "D007501")),  # a complex: Dextrans, Iron
        ("simvastatin-ezetimibe", ("D000069438", "D019821")),  # a combination of the two
        ("blood urea nitrogen", ("D009584", "D014508")),  # a measurement: Nitrogen, Urea
    ],
)
def test_two_chemicals_written_together_name_neither_alone(
    norm: DictionaryNormalizer, name: str, parts: tuple[str, ...]
) -> None:
    r = norm.normalize(name, "chemical")
    assert (r.ontology_id, r.matched_by, r.candidates) == (None, "ambiguous", parts)


def test_a_salts_counter_ion_or_a_list_keeps_the_part(norm: DictionaryNormalizer) -> None:
    # hydrogen beside a compound names its salt or acid form, which MeSH files under it
    r = norm.normalize("hydrogen cyanamide", "chemical")
    assert (r.ontology_id, r.matched_by) == ("D003484", "partial")  # Cyanamide
    # a list names each of its members: the part is one of them
    r = norm.normalize("cocaine and ethanol", "chemical")
    assert (r.ontology_id, r.matched_by) == ("D000431", "partial")  # Ethanol


def test_the_part_before_inhibitors_names_the_enzyme_not_the_agent(
    norm: DictionaryNormalizer,
) -> None:
    assert norm.normalize("cytochrome P-450 3A4 inhibitors", "chemical").ontology_id is None


def test_a_list_of_names_is_no_misspelling(norm: DictionaryNormalizer) -> None:
    # near "adenosine A2 receptor antagonist" in letters, but a list of two receptors
    assert norm.normalize("adenosine A2A/A1 receptor antagonist", "chemical").ontology_id is None
    # a comma between locants is no list
    r = norm.normalize("1,3-bis (2-chloroethyl)-1-nitrosoure", "chemical")
    assert (r.normalized_name, r.matched_by) == ("Carmustine", "spelling")


def test_a_substituent_beside_a_parent_names_another_compound(norm: DictionaryNormalizer) -> None:
    # methylscopolamine is no scopolamine; "nitro" is a group, not Nitroglycerin's "Nitro"
    assert norm.normalize("methyl scopolamine", "chemical").ontology_id is None
    assert norm.normalize("nitro-L-arginine methyl ester", "chemical").ontology_id is None


def test_one_noun_for_a_class_of_drugs_for_another(norm: DictionaryNormalizer) -> None:
    # MeSH: "Calcium Channel Blocking Drugs", an entry term of Calcium Channel Blockers
    r = norm.normalize("calcium channel blocking agents", "chemical")
    assert (r.ontology_id, r.via) == ("D002121", "calcium channel blocking drug")


def test_a_name_without_its_aside_says_so(norm: DictionaryNormalizer) -> None:
    r = norm.normalize("Toll-like receptor (TLR) 4", "chemical")
    assert (r.ontology_id, r.matched_by, r.via) == ("D051197", "rewrite", "toll-like receptor 4")
