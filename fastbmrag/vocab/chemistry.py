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


def _parsed(text: str) -> tuple[str, re.Match[str] | None]:
    """The formula without its charge, and its binary match (an element, then an anion)."""
    text = _SPACED_CHARGE_RE.sub(r"\1", text)  # "Ca2 +": the charge written apart
    core = _CHARGE_RE.sub("", text) if text[-1:] in ("+", "-", ")") else text
    m = _BINARY_RE.match(core)
    if m is not None and (m.group(1) not in ELEMENTS or m.group(3) not in ANIONS):
        m = None
    return core, m


def is_formula(text: str) -> bool:
    """ "Na", "Ca2+", "Fe2O3": an element symbol, or a binary formula of an element and an anion."""
    core, m = _parsed(text)
    return core in ELEMENTS or m is not None


def formula_names(text: str) -> list[str]:
    """Names for an element symbol or a binary formula, as IUPAC names binary compounds:
    "Ca2+" -> calcium; a metal's salt without multipliers (the charges fix the counts):
    "CaCl2" -> calcium chloride; a molecule with them: "CO2" -> carbon dioxide, "NO" ->
    nitrogen monoxide, "N2O" -> dinitrogen monoxide; hydrogen without one: "H2O" -> hydrogen
    oxide. A molecule whose first element has no count may also be named without the anion's
    count, which names the class ("nitrogen oxide": Nitrogen Oxides); one whose first element
    has a count has only its full name ("H2O2" is not hydrogen oxide, water). Case-sensitive;
    [] when not a formula."""
    core, m = _parsed(text)
    if core in ELEMENTS:
        return [ELEMENTS[core]]
    if m is None:
        return []
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
