"""The normaliser's stages as case tables, on the bundled HGNC, NCBI Gene and MeSH data: each row
is a name, its type, a context ("" for none), the ids expected (a coordination's parts' ids; ()
for no id) and what the row shows, under the stage (``matched_by``) that must decide it. A rule
is a row here, not a test function; every stage the normaliser reports has a table."""

from __future__ import annotations

import pytest

from fastbmrag.vocab import DictionaryNormalizer, Normalized, load_normalizer
from fastbmrag.vocab.context import MATCHED_BY

Row = tuple[str, str, str, tuple[str, ...], str]

DRUG_TEXT = (
    "Isoniazid-induced hepatotoxicity. Two patients developed hepatitis and dyskinesias, and "
    "one was dyskinetic, after administration of isoniazid."
)

# stage -> [(name, type, context, expected ids, what the row shows)]
CASES: dict[str, list[Row]] = {
    # ---- the name as written ----
    "symbol": [
        ("IL-1β", "gene", "", ("HGNC:5992",), "Greek letters and punctuation folded"),
        ("IL1B mRNA", "gene", "", ("HGNC:5992",), "a molecule word after the symbol"),
        ("AR", "gene", "", ("HGNC:644",), "the approved symbol before three genes' alias"),
        ("IL-1 beta", "gene", "", ("HGNC:5992",), "a gene of its own, no isoform of IL1"),
        ("miR-21", "gene", "", ("HGNC:31586",), "a micro-RNA"),
    ],
    "prev_symbol": [
        ("TNF-alpha", "gene", "", ("HGNC:11892",), "TNF's previous symbol"),
        ("TNF-a", "gene", "", ("HGNC:11892",), "a withdrawn symbol no other gene uses"),
    ],
    "alias": [
        ("p53", "gene", "", ("HGNC:11998",), "TP53: its names write p53"),
        ("TRbeta", "gene", "", ("HGNC:11799",), "THRB: a glued Greek letter as HGNC writes it"),
        ("ER", "gene", "Tumours were ER positive; estrogen receptor 1 signalling drove growth.",
         ("HGNC:3467",), "two genes' alias: the text's words pick ESR1"),
        ("p50", "gene", "The nuclear factor kappa B subunit p50 binds DNA.", ("HGNC:7794",),
         "NFKB1: 'kappa' says which, 'subunit' does not"),
    ],  # fmt: skip
    "name": [
        ("interleukin 1 beta", "gene", "", ("HGNC:5992",), "HGNC's approved name"),
        ("tumor protein p53", "gene", "", ("HGNC:11998",), "HGNC's approved name"),
        ("Endometrioses", "disease", "", ("D004715",), "a descriptor's name, plural"),
        ("Alzheimer's disease", "disease", "", ("D000544",), "the possessive folded"),
        ("anaemia", "disease", "", ("D000740",), "British spelling"),
        ("angio-oedema", "disease", "", ("D000799",), "folded as one word too"),
        ("famotidine", "chemical", "", ("D015738",), ""),
        ("amphetamine", "chemical", "", ("D000661",), ""),
        ("amphetamines", "chemical", "", ("D000662",), "the class, not Amphetamine"),
        ("glutamates", "chemical", "", ("D005971",), "the salts' class"),
    ],
    "prev_name": [
        ("Ubiquitin carboxyl-terminal esterase L1", "gene", "", ("HGNC:12513",),
         "UCHL1: a previous name without its parenthesised aside"),
        ("glycoprotein IX", "gene", "", ("HGNC:4444",), "GP9: a roman numeral as a number"),
    ],  # fmt: skip
    "alias_name": [
        ("estrogen receptor alpha", "gene", "", ("HGNC:3467",), "ESR1"),
    ],
    "protein_name": [
        ("thymidylate synthase", "gene", "", ("HGNC:12441",), "TYMS, NCBI Gene's protein name"),
        ("hepcidin", "gene", "", ("HGNC:15598",), "HAMP"),
        ("thyrotropin receptor", "gene", "", ("HGNC:12373",), "TSHR"),
        ("tumor necrosis factor alpha", "gene", "", ("HGNC:11892",),
         "TNF: it begins related genes' names, no kinds of it"),
    ],  # fmt: skip
    "ncbi_synonym": [
        ("TIPE2", "gene", "", ("HGNC:26277",), "TNFAIP8L2: a synonym HGNC does not list"),
        ("Star-PAP", "gene", "", ("HGNC:26184",), "TUT1"),
    ],
    "supplementary_name": [
        ("bevonium", "chemical", "", ("C000002",), "a compound MeSH has as a supplementary "
         "concept, filed under Benzilates"),
        ("2,2',4,4'-tetrabromodiphenyl ether", "chemical", "", ("C511295",), "a congener"),
    ],
    "supplementary_term": [
        ("acetylglucosaminylasparagine", "chemical", "", ("C000009",), "an entry term"),
        ("PBDE-47", "chemical", "", ("C511295",), "the congener's code, as MeSH lists it"),
    ],
    "entry_term": [
        ("endometrioma", "disease", "", ("D004715",), "Endometriosis"),
        ("breast cancer", "disease", "", ("D001943",), "Breast Neoplasms"),
        ("necrotising fasciitis", "disease", "", ("D019115",), "British -ise"),
        ("kidney failure acute", "disease", "", ("D058186",), "a permuted entry term"),
        ("glutamate", "chemical", "", ("D018698",), "Glutamic Acid"),
        ("sodium valproate", "chemical", "", ("D014635",), "Valproic Acid"),
    ],
    "word_order": [
        ("neoplasm of the breast", "disease", "", ("D001943",), "Breast Neoplasms"),
        ("failure renal acute", "disease", "", ("D058186",), "Acute Kidney Injury"),
        ("chloride sodium", "chemical", "", ("D012965",), "Sodium Chloride"),
    ],
    "formula": [
        ("Ca2+", "chemical", "", ("D002118",), "an ion as its element"),
        ("Ca2 +", "chemical", "", ("D002118",), "the charge written apart"),
        ("CaCl2", "chemical", "", ("D002122",), "Calcium Chloride"),
        ("NO", "chemical", "", ("D009569",), "the anion's count: nitrogen monoxide"),
        ("CO", "chemical", "", ("D002248",), "Carbon Monoxide"),
        ("H2O", "chemical", "", ("D014867",), "hydrogen takes no multiplier"),
        ("H2S", "chemical", "", ("D006862",), "Hydrogen Sulfide"),
        ("Al2O3", "chemical", "", ("D000537",), "Aluminum Oxide"),
        ("As2O3", "chemical", "", ("D000077237",), "Arsenic Trioxide"),
        ("ZnSO(4)", "chemical", "", ("D019287",), "a count after parentheses"),
        ("NaHCO3", "chemical", "", ("D017693",), "Sodium Bicarbonate"),
        ("NH4Cl", "chemical", "", ("D000643",), "Ammonium Chloride"),
        ("O2", "chemical", "", ("D010100",), "a diatomic element"),
        ("Cl-", "chemical", "", ("D002712",), "an anion, not the element"),
    ],
    # ---- what the text says ----
    "abbreviation": [
        ("T4", "chemical", "Serum thyroxine (T4) was measured in all patients.", ("D013974",),
         "a short form through its long form"),
        ("IDM", "chemical", "After a single oral dose of 4 mg/kg indomethacin (IDM) to rats",
         ("D007213",), "Indomethacin"),
        ("CAP", "gene", "Cyclase associated actin cytoskeleton regulatory protein 1 (CAP) binds "
         "actin. Loss of CAP slowed migration.", ("HGNC:20040",), "CAP1, not six genes' alias"),
        ("VEGF receptor 2", "gene", "Vascular endothelial growth factor (VEGF) signals through "
         "VEGF receptor 2.", ("HGNC:6307",), "KDR: a short form inside a name"),
        ("HBV infection", "disease", "Hepatitis B virus (HBV) infection is common.",
         ("D006509",), "Hepatitis B"),
        ("VSD", "disease", "NSAIDs induce ventricular septal defects (VSDs) in rats; one VSD "
         "was large.", ("D006345",), "a plural short form defines the singular"),
        ("AZT", "chemical", "Patients took zidovudine (AZT) daily.", ("D015215",),
         "letters that do not spell it: the words before it"),
    ],  # fmt: skip
    "drug_induced": [
        ("hepatitis", "disease", DRUG_TEXT, ("D056486",),
         "its sentence speaks of a drug's effect: Chemical and Drug Induced Liver Injury"),
        ("dyskinesias", "disease", DRUG_TEXT, ("D004409",), "Dyskinesia, Drug-Induced"),
        ("levodopa-induced dyskinesia", "disease", "", ("D004409",), "the name says so"),
    ],  # fmt: skip
    # ---- several things in one name ----
    "coordination": [
        ("breast and ovarian cancer", "disease", "", ("D001943", "D010051"), "one id per part"),
        ("type 1 and type 2 diabetes", "disease", "", ("D003922", "D003924"), ""),
        ("SMAD2/3", "gene", "", ("HGNC:6768", "HGNC:6769"), "a slash coordination"),
        ("IL-4 and -13", "gene", "", ("HGNC:6014", "HGNC:5973"), "the prefix shared"),
        ("TGF-beta1-3", "gene", "", ("HGNC:11766", "HGNC:11768", "HGNC:11769"), "a range"),
    ],
    "gene_group": [
        ("caspases", "gene", "", ("HGNC-GROUP:468",), "a family: its node, never a member"),
        ("Smads", "gene", "", ("HGNC-GROUP:750",), "a numbered series of symbols"),
        ("matrix metalloproteinases", "gene", "", ("HGNC-GROUP:891",),
         "the stem its members' names share"),
        ("estrogen receptors", "gene", "Tamoxifen blocks estrogen receptors; ESR1 mutations "
         "confer resistance.", ("HGNC-GROUP:2077",), "a plural names the family"),
        ("MAPKs", "gene", "MAPKs were active; MAPK1 was phosphorylated.", ("HGNC-GROUP:651",),
         "a plural after capitals too"),
        ("estrogen receptor", "gene", "ESR1 and ESR2 both bind estradiol; the estrogen receptor "
         "dimerises.", ("HGNC-GROUP:2077",), "the text writes two members"),
    ],  # fmt: skip
    "group_member": [
        ("estrogen receptor", "gene", "Tamoxifen blocks the estrogen receptor; ESR1 mutations "
         "confer resistance.", ("HGNC:3467",), "the one member the text writes"),
        ("claudin", "gene", "Claudin loss and low CLDN1 expression marked invasive tumours.",
         ("HGNC:2032",), ""),
        ("Ras", "gene", "Oncogenic KRAS drives tumour growth; Ras signalling was blocked.",
         ("HGNC:6407",), "the stem of HRAS, KRAS, NRAS ..."),
        ("DOCK", "gene", "DOCK8 deficiency impairs T cells; DOCK loss was confirmed.",
         ("HGNC:19191",), "the stem of DOCK1 ... DOCK11"),
    ],
    # ---- names written beyond the dictionary ----
    "isoform": [
        ("CD44v6", "gene", "", ("HGNC:1681",), "a variant after an approved symbol"),
        ("CD44 variant 6", "gene", "", ("HGNC:1681",), ""),
        ("TP63 gamma", "gene", "", ("HGNC:15979",), "a Greek letter after the symbol"),
    ],
    "respelled": [
        ("CEBPalpha", "gene", "", ("HGNC:1833",), "a Greek letter glued to the capitals"),
        ("Toll-like receptor (TLR) 4", "gene", "", ("HGNC:11850",), "a short form inside it"),
    ],
    "derived": [
        ("hypotensive", "disease", "", ("D007022",), "Hypotension"),
        ("bruising", "disease", "", ("D003288",), "Contusions"),
        ("hypertrophied", "disease", "", ("D006984",), "Hypertrophy"),
        ("HIV-infected", "disease", "", ("D015658",), "HIV Infections"),
        ("obese", "disease", "", ("D009765",), "Obesity"),
        ("asystolic", "disease", "", ("D006323",), "Heart Arrest"),
        ("edematous", "disease", "", ("D004487",), "Edema"),
        ("painful", "disease", "", ("D010146",), "Pain"),
        ("thrombi", "disease", "", ("D013927",), "Thrombosis"),
        ("contrast medium", "chemical", "", ("D003287",), "a Latin plural: Contrast Media"),
    ],
    "rewrite": [
        ("extrapyramidal symptoms", "disease", "", ("D001480",), "Basal Ganglia Diseases"),
        ("memory impairment", "disease", "", ("D008569",), "Memory Disorders"),
        ("liver tumors", "disease", "", ("D008113",), "Liver Neoplasms"),
        ("liver metastasis", "disease", "", ("D008113",), "a metastasis as its site's neoplasm"),
        ("gastric adenocarcinoma", "disease", "", ("D013274",), "Stomach Neoplasms"),
        ("benign prostate hyperplasia", "disease", "", ("D011470",), "Prostatic Hyperplasia"),
        ("thyroid illness", "disease", "", ("D013959",), "Thyroid Diseases"),
        ("adenovirus disease", "disease", "", ("D000257",), "Adenoviridae Infections"),
        ("syncopal attacks", "disease", "", ("D013575",), "Syncope"),
        ("tic-like symptoms", "disease", "", ("D013981",), "Tic Disorders"),
        ("elevated blood pressure", "disease", "", ("D006973",), "Hypertension"),
        ("QT prolongation", "disease", "", ("D008133",), "Long QT Syndrome"),
        ("decreased cardiac output", "disease", "", ("D002303",), "Cardiac Output, Low"),
        ("drop in blood pressure", "disease", "", ("D007022",), "Hypotension"),
        ("decreased renal function", "disease", "", ("D051437",), "Renal Insufficiency"),
        ("calcification of the artery", "disease", "", ("D061205",), "Vascular Calcification"),
        ("bone marrow suppression", "disease", "", ("D001855",), "Bone Marrow Diseases"),
        ("impairment of ventricular function", "disease", "", ("D018754",),
         "Ventricular Dysfunction"),
        ("loss of kidney function", "disease", "", ("D051437",), "Renal Insufficiency"),
        ("thyroid function abnormalities", "disease", "", ("D013959",), "Thyroid Diseases"),
        ("deterioration of cognitive functions", "disease", "", ("D003072",),
         "Cognition Disorders"),
        ("impaired cognitive function", "disease", "", ("D003072",), "Cognition Disorders"),
        ("neuronal degeneration", "disease", "", ("D009410",), "Nerve Degeneration"),
        ("olfactory disorders", "disease", "", ("D000857",), "Olfaction Disorders"),
        ("dry mouth", "disease", "", ("D014987",), "Xerostomia (mouth dryness)"),
        ("prolonged QT interval", "disease", "", ("D008133",), "Long QT Syndrome"),
        ("prolongation of the QT interval", "disease", "", ("D008133",), "Long QT Syndrome"),
        ("decrease in diastolic blood pressure", "disease", "", ("D007022",), "Hypotension"),
        ("rise in arterial blood pressure", "disease", "", ("D006973",), "Hypertension"),
        ("neuronal loss", "disease", "", ("D009410",), "the loss of a tissue"),
        ("neuronal death", "disease", "", ("D009410",), "Nerve Degeneration"),
        ("immunodeficiency", "disease", "", ("D007153",),
         "Immunologic Deficiency Syndromes, not Immunodeficiency 5"),
        ("myonecrosis", "disease", "", ("D009135",), "a combining form: Muscular Diseases"),
        ("rheumatologic disease", "disease", "", ("D012216",), "-ologic as -ic"),
        ("impaired memory functioning", "disease", "", ("D008569",), "Memory Disorders"),
        ("D-glucarates", "chemical", "", ("D005937",), "an anion as its acid: Glucaric Acid"),
        ("para-aminohippurate", "chemical", "", ("D010130",), "p-Aminohippuric Acid"),
        ("beta-adrenergic blocking drugs", "chemical", "", ("D000319",),
         "a class of drugs as MeSH names it"),
        ("antithyroid medications", "chemical", "", ("D013956",), "Antithyroid Agents"),
        ("contrast media-induced nephropathy", "disease", "", ("D007674",),
         "the condition after '-induced', its organ's disease"),
    ],  # fmt: skip
    "completion": [
        ("variant angina", "disease", "", ("D000788",), "Angina Pectoris, Variant"),
        ("Duchenne dystrophy", "disease", "", ("D020388",), "Muscular Dystrophy, Duchenne"),
        ("stress incontinence", "disease", "", ("D014550",), "Urinary Incontinence, Stress"),
        ("platelet aggregation", "disease", "", ("D001791",), "Blood Platelet Disorders"),
        ("marrow suppression", "disease", "", ("D001855",), "Bone Marrow Diseases"),
    ],
    "extend": [
        ("ecstasy", "chemical", "", ("D018817",), "'Ecstasy (Drug)': the word names it"),
    ],
    "organ": [
        ("nephrotoxicity", "disease", "", ("D007674",), "Kidney Diseases"),
        ("myelosuppression", "disease", "", ("D001855",), "Bone Marrow Diseases"),
        ("retinopathy", "disease", "", ("D012164",), "Retinal Diseases"),
    ],  # fmt: skip
    "site": [
        ("bladder inflammation", "disease", "", ("D001745",), "Urinary Bladder Diseases"),
        ("cardiovascular toxicity", "disease", "", ("D002318",), "Cardiovascular Diseases"),
        ("visual field loss", "disease", "", ("D014786",), "a part of an organ as the organ"),
        ("renal tissue damage", "disease", "", ("D007674",), "Kidney Diseases"),
    ],
    "conjunct": [
        ("pulmonary and renal insufficiency", "disease", "", ("D051437",),
         "one conjunct when not every part is a term"),
    ],  # fmt: skip
    "head": [
        ("impaired overnight memory", "disease", "", ("D008569",), "the head of a longer name"),
        ("blurred vision", "disease", "", ("D014786",), "Vision Disorders"),
        ("overdosage", "disease", "", ("D062787",), "the other (Opiate Overdose) is below it"),
        ("diabetes", "disease", "", ("D003920",), "the largest subtree: Diabetes Mellitus"),
        ("diabetic", "disease", "", ("D003920",), "adjective -> noun first"),
        ("fractures", "disease", "", ("D050723",), "Fractures, Bone"),
    ],
    "partial": [
        ("severe hypotension", "disease", "", ("D007022",), "a modifier that says little"),
        ("pulmonary hypertension syndrome", "disease", "", ("D006976",),
         "modifiers naming a disease keep it"),
        ("bupropion HCl", "chemical", "", ("D016642",), "a salt names its substance"),
        ("hydrogen cyanamide", "chemical", "", ("D003484",), "hydrogen beside a compound"),
        ("cocaine and ethanol", "chemical", "", ("D000431",), "a list names each member"),
    ],  # fmt: skip
    "spelling": [
        ("epirubicine", "chemical", "", ("D015251",), "one edit"),
        ("methothexate", "chemical", "", ("D008727",), "one edit"),
        ("dysguesia", "disease", "", ("D004408",), "two letters swapped"),
        ("bradycardiac", "disease", "", ("D001919",), ""),
    ],
    "id": [
        ("C000002", "auto", "", ("C000002",), "a supplementary concept's id: looked up"),
        ("d004715", "disease", "", ("D004715",), "a descriptor's id, in any case"),
        ("HGNC:5992", "auto", "", ("HGNC:5992",), "an HGNC id"),
    ],
    # ---- no id ----
    "ambiguous": [
        ("ER", "gene", "", (), "ESR1 and EREG share the alias; no text to decide"),
        ("ERK", "gene", "", (), "EPHB2's previous symbol, MAPK1's NCBI synonym"),
        ("rigidity", "disease", "", (), "several diseases complete the word"),
        ("p27", "gene", "", (), "many proteins weigh 27 kDa: no one gene's alias"),
        ("iron dextran", "chemical", "", (), "a complex of two chemicals names neither alone"),
    ],
    "abstained": [
        ("viral hepatitis", "disease", DRUG_TEXT, (),
         "the name states another cause; Hepatitis would drop most of it"),
        ("forestomach tumors", "disease", "", (), "Neoplasms carries too little of the name"),
        ("weakness", "disease", "", (), "a one-word completion: offered, not given"),
        ("PBDE-99", "chemical", "", (), "a code MeSH does not list: not its class"),
        ("sodium 3-sulfanylpropanesulfonate", "chemical", "", (),
         "a cation for a salt whose anion carries the name"),
    ],  # fmt: skip
    "none": [
        ("C04", "disease", "", (), "a letter with digits is a code: no completion"),
        ("C999999", "auto", "", (), "an id not bundled: none, never a name's reading"),
        ("ANOVA", "gene", "Groups were compared by analysis of variance (ANOVA).", (),
         "a defined long form that names no gene"),
        ("T4", "gene", "Serum thyroxine (T4) was measured in all patients.", (),
         "a hormone's short form is no CD4"),
        ("neuronal dysfunction", "disease", "", (), "one word short of another's term only"),
        ("myoclonia", "disease", "", (), "a combining form's rest must be a word of a term"),
        ("axonal degeneration", "disease", "", (), "would add a word: Retinal Degeneration"),
        ("ureteric obstruction", "disease", "", (), "would add a word: Intestinal Obstruction"),
        ("cardiorespiratory arrest", "disease", "", (), "would add a word the name lacks"),
        ("truncal rigidity", "disease", "", (), "several diseases complete the head"),
        ("elevated intraocular pressure", "disease", "", (), "Pressure Ulcer's head is ulcer"),
        ("endometriosis", "chemical", "", (), "types keep to their trees"),
        ("IL1B", "disease", "", (), "types keep to their trees"),
        ("cytochrome P450", "gene", "", (), "a stem of several groups names no family"),
        ("NADPH oxidase", "gene", "", (), "a family stem among one gene's NCBI names"),
        ("OCT4 beta", "gene", "", (), "an alias before a Greek letter often names a family"),
        ("H2O2", "chemical", "", (), "a peroxide, not water"),
        ("N2O", "chemical", "", (), "dinitrogen monoxide, not nitric oxide"),
        ("cannabis", "chemical", "", (), "only 'Medical Cannabis': a use"),
        ("frobnicated wibble", "disease", "", (), "no term"),
        ("Ras", "gene", "HRAS and KRAS were both mutated; Ras activity rose.", (),
         "the text writes two of the family's symbols"),
        ("RAS", "gene", "Blockade of the renin-angiotensin system (RAS) lowered pressure; KRAS "
         "was not mutated.", (), "a short form the text defines as no gene"),
    ],
}  # fmt: skip


def ids(r: Normalized) -> tuple[str, ...]:
    if r.parts:
        return tuple(p.ontology_id or "" for p in r.parts)
    return (r.ontology_id,) if r.ontology_id else ()


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


@pytest.mark.parametrize(
    ("stage", "name", "type_", "context", "expected"),
    [(stage, *row[:4]) for stage, rows in CASES.items() for row in rows],
)
def test_stage(
    norm: DictionaryNormalizer,
    stage: str,
    name: str,
    type_: str,
    context: str,
    expected: tuple[str, ...],
) -> None:
    r = norm.normalize(name, type_, context)
    assert (ids(r), r.matched_by) == (expected, stage)


def test_every_stage_has_a_table() -> None:
    """Every ``matched_by`` of the declared table (:data:`MATCHED_BY`) has rows here."""
    documented = set(MATCHED_BY)
    assert len(documented) > 25
    assert documented <= set(CASES)
