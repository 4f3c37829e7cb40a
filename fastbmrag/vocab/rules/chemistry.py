"""How chemical names are written: element symbols and binary formulae (IUPAC names of binary
compounds), compound codes and congener numbers, locant prefixes."""

from __future__ import annotations

import re

# Chemical element symbols (IUPAC) -> English names, for "Na", "Ca2+", "K(+)".
ELEMENTS = {
    "H": "hydrogen", "Li": "lithium", "B": "boron", "C": "carbon", "N": "nitrogen",
    "O": "oxygen", "F": "fluorine", "Na": "sodium", "Mg": "magnesium", "Al": "aluminum",
    "Si": "silicon", "P": "phosphorus", "S": "sulfur", "Cl": "chlorine", "K": "potassium",
    "Ca": "calcium", "Ti": "titanium", "V": "vanadium", "Cr": "chromium", "Mn": "manganese",
    "Fe": "iron", "Co": "cobalt", "Ni": "nickel", "Cu": "copper", "Zn": "zinc",
    "As": "arsenic", "Se": "selenium", "Br": "bromine", "Rb": "rubidium", "Sr": "strontium",
    "Mo": "molybdenum", "Ag": "silver", "Cd": "cadmium", "Sn": "tin", "I": "iodine",
    "Cs": "cesium", "Ba": "barium", "Gd": "gadolinium", "W": "tungsten", "Pt": "platinum",
    "Au": "gold", "Hg": "mercury", "Tl": "thallium", "Pb": "lead", "Bi": "bismuth",
    "U": "uranium",
}  # fmt: skip
ANIONS = {
    "Cl": "chloride", "Br": "bromide", "I": "iodide", "F": "fluoride", "O": "oxide",
    "S": "sulfide", "N": "nitride",
}  # fmt: skip
# The cations of salts and acids named cation-first ("sodium valproate", "hydrogen cyanide"):
# hydrogen and the metals of groups 1 and 2, whose ions stand beside a compound without
# forming a complex with it (MeSH files such salts under the compound).
COUNTER_IONS = frozenset(
    ["hydrogen", "lithium", "sodium", "potassium", "rubidium", "cesium", "magnesium", "calcium",
     "strontium", "barium"]
)  # fmt: skip
# Words that name a molecule by what it does to the words before them, its target
# ("prostaglandin analog", "fat substitute", "calcium antagonist"; see also
# keys.RELATION_WORDS, "LPS receptor").
ACTING_ON = frozenset(
    ["analog", "analogue", "substitute", "antagonist", "agonist", "inhibitor", "blocker",
     "antibody"]
)  # fmt: skip
# Words for an agent's target, which MeSH leaves out of the agent's name ("muscarinic receptor
# antagonist": Muscarinic Antagonists).
# Substituent prefixes (IUPAC) written as words of their own: beside a parent compound's name
# they name another compound ("methyl scopolamine" is N-methylscopolamine, not scopolamine).
SUBSTITUENTS = frozenset(
    ["methyl", "ethyl", "propyl", "butyl", "phenyl", "benzyl", "acetyl", "hydroxy", "amino",
     "nitro", "nitroso", "chloro", "fluoro", "bromo", "iodo", "methoxy", "ethoxy", "dimethyl",
     "diethyl", "trimethyl", "carboxy", "oxo"]
)  # fmt: skip
# Nouns for a class of drugs, one for another: MeSH names most classes "... Agents"
# ("antiinflammatory drugs"), some "... Drugs" ("Calcium Channel Blocking Drugs").
DRUG_WORDS = frozenset(["agent", "drug", "medication", "medicine", "medicament"])
# The elements whose molecules are diatomic, as formulae write them: "O2" is oxygen.
DIATOMIC = frozenset(["H2", "N2", "O2", "F2", "Cl2", "Br2", "I2"])
# Polyatomic anions (IUPAC names) as formulae write them, for salts: "ZnSO4" -> zinc sulfate.
POLYATOMIC_ANIONS = {
    "SO4": "sulfate", "SO3": "sulfite", "NO3": "nitrate", "NO2": "nitrite", "PO4": "phosphate",
    "HPO4": "hydrogen phosphate", "H2PO4": "dihydrogen phosphate", "CO3": "carbonate",
    "HCO3": "bicarbonate", "OH": "hydroxide", "CN": "cyanide", "SCN": "thiocyanate",
    "ClO4": "perchlorate", "ClO3": "chlorate", "ClO": "hypochlorite", "MnO4": "permanganate",
    "CrO4": "chromate", "Cr2O7": "dichromate", "AsO4": "arsenate", "AsO3": "arsenite",
    "BO3": "borate", "SiO3": "silicate", "C2O4": "oxalate", "S2O3": "thiosulfate",
}  # fmt: skip
# A salt's formula: a metal or ammonium with its count, then a polyatomic anion (in
# parentheses where counted: "Ca(OH)2"), its count written after it or as a subscript "(4)".
_SALT_RE = re.compile(
    r"^(NH4|[A-Z][a-z]?)(\d?)(?:\(("
    + "|".join(POLYATOMIC_ANIONS)
    + r")\)(\d)|("
    + "|".join(sorted([*POLYATOMIC_ANIONS, *ANIONS], key=len, reverse=True))
    + r"))$"
)
_SALT_ANIONS = {**ANIONS, **POLYATOMIC_ANIONS}  # ammonium's monatomic ones: "NH4Cl"
_SUBSCRIPT_RE = re.compile(r"\((\d)\)")
NUMBER_PREFIX = {1: "mon", 2: "di", 3: "tri", 4: "tetra", 5: "penta"}
# The elements of ELEMENTS that are no metals: their binary compounds are molecules, named with
# multipliers ("dinitrogen monoxide"); a metal's are salts, named without ("calcium chloride").
NONMETALS = frozenset(["H", "B", "C", "N", "O", "F", "Si", "P", "S", "Cl", "As", "Se", "Br", "I"])
# A compound code or congener number: capitals, then a number ("PBDE-47", "PCB-153",
# "MK-801"). The number says which compound of those the letters name (a class, a series).
CODE_NUMBER_RE = re.compile(r"[A-Z]{2,}[- ]?\d+[A-Za-z]?")


def names_one_coded_compound(name: str) -> bool:
    """ "PBDE-47", "MK-801": capitals and the number of one compound among those they name."""
    return CODE_NUMBER_RE.fullmatch(name.strip()) is not None


# A word that starts with locants ("2,2',4,4'-tetrabromodiphenyl", "3'-azido"): a substituent
# prefix, so that the name after it is the parent of another compound.
LOCANT_RE = re.compile(r"\d+[′'’]*(?:,\d+[′'’]*)*-")
_SPACED_CHARGE_RE = re.compile(r"\s+([+-]+\)?)$")
_CHARGE_RE = re.compile(r"(?:\(?\d?[+-]+\)?|\(\d?[+-]\))$")
_BINARY_RE = re.compile(r"^([A-Z][a-z]?)(\d?)([A-Z][a-z]?)\(?(\d?)\)?$")


def _parsed(text: str) -> tuple[str, re.Match[str] | None, bool]:
    """The formula without its charge, its binary match (an element, then an anion), and
    whether the charge is negative."""
    text = _SPACED_CHARGE_RE.sub(r"\1", text)  # "Ca2 +": the charge written apart
    core = _CHARGE_RE.sub("", text) if text[-1:] in ("+", "-", ")") else text
    negative = core != text and text.rstrip(")").endswith("-")
    m = _BINARY_RE.match(core)
    if m is not None and (m.group(1) not in ELEMENTS or m.group(3) not in ANIONS):
        m = None
    return core, m, negative


def is_formula(text: str) -> bool:
    """ "Na", "Ca2+", "O2", "Cl-", "Fe2O3", "ZnSO4": an element symbol, a diatomic element, an
    ion of either, a binary formula of an element and an anion, a salt of a polyatomic anion."""
    if not text[:1].isupper():  # every formula starts with an element's capital
        return False
    core, m, _ = _parsed(text)
    return core in ELEMENTS or core in DIATOMIC or m is not None or _salt_name(core) is not None


def _salt_name(core: str) -> str | None:
    """A salt's name, as IUPAC names salts (no multipliers: the charges fix the counts):
    "ZnSO4", "ZnSO(4)" -> zinc sulfate, "NaHCO3" -> sodium bicarbonate, "Ca(OH)2" -> calcium
    hydroxide; ammonium with a monatomic anion too ("NH4Cl" -> ammonium chloride)."""
    m = _SALT_RE.match(_SUBSCRIPT_RE.sub(r"\1", core) if "(" in core else core)
    if m is None:
        return None
    cation = "ammonium" if m.group(1) == "NH4" else ELEMENTS.get(m.group(1))
    if cation is None or m.group(1) in NONMETALS:
        return None  # "HNO3" is nitric acid; an acid is named otherwise
    return f"{cation} {_SALT_ANIONS[m.group(3) or m.group(5)]}"


def formula_names(text: str) -> list[str]:
    """Names for an element symbol or a binary formula, as IUPAC names binary compounds:
    "Ca2+" -> calcium; a metal's salt without multipliers (the charges fix the counts):
    "CaCl2" -> calcium chloride; a molecule with them: "CO2" -> carbon dioxide, "NO" ->
    nitrogen monoxide, "N2O" -> dinitrogen monoxide; hydrogen without one: "H2O" -> hydrogen
    oxide. A molecule whose first element has no count may also be named without the anion's
    count, which names the class ("nitrogen oxide": Nitrogen Oxides); one whose first element
    has a count has only its full name ("H2O2" is not hydrogen oxide, water). Case-sensitive;
    [] when not a formula."""
    if not text[:1].isupper():  # every formula starts with an element's capital
        return []
    core, m, negative = _parsed(text)
    if core in ELEMENTS or core in DIATOMIC:
        if negative:
            # An anion, not the element: "Cl-" -> chloride; with a digit no one reading
            # ("O2-": superoxide, O2 charged -1, or oxide, O charged -2).
            digit = any(c.isdigit() for c in text)
            return [ANIONS[core]] if core in ANIONS and not digit else []
        return [ELEMENTS[core.removesuffix("2")]]  # a cation as its element; "O2" is oxygen
    if m is None:
        salt = _salt_name(core)
        return [salt] if salt else []
    first, anion = ELEMENTS[m.group(1)], ANIONS[m.group(3)]
    leading, n = int(m.group(2) or 1), int(m.group(4) or 1)
    if m.group(1) not in NONMETALS:
        return [f"{first} {anion}"]
    if m.group(1) == "H":
        # Hydrogen takes no multiplier ("hydrogen sulfide", H2S); two or more atoms of the
        # other element make another anion ("H2O2": peroxide), which this does not name.
        return [f"hydrogen {anion}"] if n == 1 else []
    if leading > 1:
        if leading not in NUMBER_PREFIX:
            return []
        return [f"{NUMBER_PREFIX[leading]}{first} {_multiplied(n, anion)}"]
    return [f"{first} {_multiplied(n, anion)}", f"{first} {anion}"]


def _multiplied(n: int, anion: str) -> str:
    """ "monoxide", "dioxide", "tetroxide", "trichloride": the multiplier, its final vowel
    elided before an "o" (IUPAC)."""
    prefix = NUMBER_PREFIX.get(n, "")
    if prefix == "mon" and anion[0] != "o":
        prefix = "mono"
    if prefix.endswith("a") and anion[0] == "o":
        prefix = prefix[:-1]
    return prefix + anion


def acid_forms(word: str) -> list[tuple[str, str]]:
    """The acid an anion's name is the conjugate base of, as IUPAC names them: "-ate" of an
    "-ic acid" ("glucarate" -> glucaric acid), "-ite" of an "-ous acid" ("nitrite" -> nitrous
    acid); MeSH often files the anion and its salts under the acid."""
    if len(word) > 6 and word.endswith("ate"):
        return [(word[:-3] + "ic", "acid")]
    if len(word) > 6 and word.endswith("ite"):
        return [(word[:-3] + "ous", "acid")]
    return []
