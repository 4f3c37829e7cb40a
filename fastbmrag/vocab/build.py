"""Build the compact vocabulary files from the official HGNC and MeSH downloads.

Inputs (any of):

- HGNC complete set TSV (``hgnc_complete_set.txt``, optionally gzipped): one approved
  gene per row; multi-valued columns are ``"a|b"``.
- MeSH descriptors as NLM's official XML (``desc20XX.xml``, optionally gzipped), read
  with ``lxml.etree.iterparse`` one ``DescriptorRecord`` at a time, or as the two TSV
  extracts ``mesh20XX_descriptor_terms.tsv`` + ``mesh20XX_tree_numbers.tsv``.

Output: a directory with ``manifest.json`` (versions, sources, counts), ``genes.pickle.gz``
and ``mesh.pickle.gz`` (gzipped pickles of plain dicts and lists). Lookup keys are computed here, once, with the same functions the
normaliser uses at query time (:func:`gene_key`, :func:`term_key`, :func:`bag_key`), so
loading is a single ``json.loads`` per file.

Only MeSH descriptors under the C tree (diseases), F03 (mental disorders) and the D tree
(chemicals and drugs) are kept: those are the types the normaliser maps to MeSH.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import pickle
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from fastbmrag.errors import VocabError
from fastbmrag.vocab.candidates import word_weights
from fastbmrag.vocab.keys import (
    BAG_STOP,
    COMPLETION_HEADS,
    bag_key,
    gene_key,
    plain_tokens,
    raw_tokens,
    term_key,
    tokens,
)

# 2: code lists packed into a shared "multi" table (negative codes), lists written as tuples,
# bag_words and head completion masks; the loader reads 1 and 2 and refuses newer ones.
FORMAT_VERSION = 2
MANIFEST = "manifest.json"
GENES_FILE = "genes.pickle.gz"
MESH_FILE = "mesh.pickle.gz"

# Gene index kinds, in order of preference (approved symbol > previous symbol > alias).
# HGNC's names first, then NCBI Gene's (gene_info Synonyms and Other_designations, the protein
# names), which are only used for a name HGNC does not know. At most 8 kinds (codes are *8).
GENE_KINDS = (
    "symbol",
    "prev_symbol",
    "alias",
    "name",
    "prev_name",
    "alias_name",
    "ncbi_synonym",
    "protein_name",
)
# MeSH index kinds, in order of preference.
MESH_KINDS = ("descriptor", "entry_term")

# MeSH tree prefixes kept, and what they mean to the normaliser.
DISEASE_TREES = ("C", "F03")
CHEMICAL_TREES = ("D",)
MENTAL_TREE = "F03"
# C25 Chemically-Induced Disorders, and words that name the cause in a drug-induced form.
CHEMICALLY_INDUCED_TREE = "C25"
PROCESS_TREE = "C23.550"
DRUG_CAUSE_WORDS = frozenset(["drug", "substance", "medication", "chemical", "chemically"])


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class GeneRecord:
    hgnc_id: str  # "HGNC:5992"
    symbol: str
    name: str
    locus_group: str = ""
    prev_symbols: list[str] = field(default_factory=list)
    alias_symbols: list[str] = field(default_factory=list)
    prev_names: list[str] = field(default_factory=list)
    alias_names: list[str] = field(default_factory=list)
    ncbi_synonyms: list[str] = field(default_factory=list)  # NCBI Gene's Synonyms
    protein_names: list[str] = field(default_factory=list)  # NCBI Gene's Other_designations
    groups: list[tuple[str, str]] = field(default_factory=list)  # HGNC gene groups: (id, name)


@dataclass(slots=True)
class MeshTerm:
    text: str
    record_preferred: bool = False
    concept_preferred: bool = False
    permuted: bool = False


@dataclass(slots=True)
class MeshRecord:
    ui: str  # "D004715"
    name: str
    tree_numbers: list[str] = field(default_factory=list)
    terms: list[MeshTerm] = field(default_factory=list)

    def categories(self) -> str:
        """ "C" (disease: C tree or F03), "D" (chemical), both, or "" when neither (kept trees
        only); "F" is added after "C" when the descriptor is (also) a mental disorder (F03)."""
        cats = ""
        if any(t.startswith(DISEASE_TREES) for t in self.tree_numbers):
            cats += "C"
        if any(t.startswith(MENTAL_TREE) for t in self.tree_numbers):
            cats += "F"
        if any(t.startswith(CHEMICAL_TREES) for t in self.tree_numbers):
            cats += "D"
        return cats


# Tree numbers of the MeSH category headings (C04 Neoplasms, F03 Mental Disorders, D02 ...).
# NLM's XML carries them; the TSV extracts leave them out, so they are restored from here.
MESH_TOP_LEVEL = {
    "Infections": "C01",
    "Neoplasms": "C04",
    "Musculoskeletal Diseases": "C05",
    "Digestive System Diseases": "C06",
    "Stomatognathic Diseases": "C07",
    "Respiratory Tract Diseases": "C08",
    "Otorhinolaryngologic Diseases": "C09",
    "Nervous System Diseases": "C10",
    "Eye Diseases": "C11",
    "Urogenital Diseases": "C12",
    "Cardiovascular Diseases": "C14",
    "Hemic and Lymphatic Diseases": "C15",
    "Congenital, Hereditary, and Neonatal Diseases and Abnormalities": "C16",
    "Skin and Connective Tissue Diseases": "C17",
    "Nutritional and Metabolic Diseases": "C18",
    "Endocrine System Diseases": "C19",
    "Immune System Diseases": "C20",
    "Disorders of Environmental Origin": "C21",
    "Animal Diseases": "C22",
    "Pathological Conditions, Signs and Symptoms": "C23",
    "Occupational Diseases": "C24",
    "Chemically-Induced Disorders": "C25",
    "Wounds and Injuries": "C26",
    "Mental Disorders": "F03",
    "Inorganic Chemicals": "D01",
    "Organic Chemicals": "D02",
    "Heterocyclic Compounds": "D03",
    "Polycyclic Compounds": "D04",
    "Macromolecular Substances": "D05",
    "Hormones, Hormone Substitutes, and Hormone Antagonists": "D06",
    "Enzymes and Coenzymes": "D08",
    "Carbohydrates": "D09",
    "Lipids": "D10",
    "Amino Acids, Peptides, and Proteins": "D12",
    "Nucleic Acids, Nucleotides, and Nucleosides": "D13",
    "Complex Mixtures": "D20",
    "Biological Factors": "D23",
    "Biomedical and Dental Materials": "D25",
    "Pharmaceutical Preparations": "D26",
    "Chemical Actions and Uses": "D27",
}

# --------------------------------------------------------------------------------------------
# Parsers
# --------------------------------------------------------------------------------------------


def _open_text(path: Path) -> IO[str]:
    try:
        with open(path, "rb") as fh:
            magic = fh.read(2)
    except OSError as err:
        raise VocabError(f"Cannot read {path}: {err.strerror}; check the path.") from err
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split("|") if v.strip()] if value else []


def parse_hgnc_tsv(path: Path) -> Iterator[GeneRecord]:
    """Approved genes from an HGNC complete-set TSV (plain or gzipped)."""
    with _open_text(path) as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        need = {"hgnc_id", "symbol", "name"}
        if not reader.fieldnames or not need <= set(reader.fieldnames):
            raise VocabError(
                f"{path} is not an HGNC complete-set TSV (needs columns {', '.join(sorted(need))}); "
                "download hgnc_complete_set.txt from genenames.org."
            )
        for row in reader:
            if row.get("status", "Approved") not in ("Approved", None):
                continue
            if not row["hgnc_id"] or not row["symbol"]:
                continue
            yield GeneRecord(
                hgnc_id=row["hgnc_id"],
                symbol=row["symbol"],
                name=row["name"] or "",
                locus_group=row.get("locus_group") or "",
                prev_symbols=_split(row.get("prev_symbol") or ""),
                alias_symbols=_split(row.get("alias_symbol") or ""),
                prev_names=_split(row.get("prev_name") or ""),
                alias_names=_split(row.get("alias_name") or ""),
                groups=[
                    (f"{GROUP_PREFIX}{gid}", gname)
                    for gid, gname in zip(
                        _split(row.get("gene_group_id") or ""),
                        _split(row.get("gene_group") or ""),
                        strict=False,
                    )
                ],
            )


def parse_gene_info(path: Path) -> dict[str, tuple[list[str], list[str]]]:
    """NCBI Gene's names of the genes HGNC knows: ``{hgnc_id: (synonyms, protein names)}``, from
    a ``gene_info`` file (plain or gzipped), joined through its dbXrefs ("HGNC:HGNC:5992")."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    with _open_text(path) as fh:
        header = fh.readline().lstrip("#").rstrip("\n").split("\t")
        need = ("dbXrefs", "Synonyms", "Other_designations")
        if not set(need) <= set(header):
            raise VocabError(
                f"{path} is not an NCBI gene_info file (needs columns {', '.join(need)}); "
                "download Homo_sapiens.gene_info.gz from NCBI Gene."
            )
        col = {name: header.index(name) for name in need}
        for line in fh:
            cells = line.rstrip("\n").split("\t")
            if len(cells) < len(header):
                continue
            hgnc = [x[5:] for x in cells[col["dbXrefs"]].split("|") if x.startswith("HGNC:HGNC:")]
            if not hgnc:
                continue

            def names(value: str) -> list[str]:
                return [v for v in _split(value) if v != "-"]

            out[hgnc[0]] = (names(cells[col["Synonyms"]]), names(cells[col["Other_designations"]]))
    return out


def with_gene_info(
    genes: Iterable[GeneRecord], info: dict[str, tuple[list[str], list[str]]]
) -> Iterator[GeneRecord]:
    """``genes`` with NCBI Gene's synonyms and protein names added."""
    for g in genes:
        synonyms, proteins = info.get(g.hgnc_id, ([], []))
        g.ncbi_synonyms, g.protein_names = synonyms, proteins
        yield g


def parse_mesh_tsv(terms_path: Path, trees_path: Path) -> Iterator[MeshRecord]:
    """MeSH descriptors from the descriptor-terms and tree-numbers TSV extracts."""
    trees: dict[str, list[str]] = {}
    with _open_text(trees_path) as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        if not reader.fieldnames or "tree_location" not in reader.fieldnames:
            raise VocabError(f"{trees_path} is not a MeSH tree-numbers TSV (needs tree_location).")
        for row in reader:
            trees.setdefault(row["DescriptorUI"], []).append(row["tree_location"])
    records: dict[str, MeshRecord] = {}
    with _open_text(terms_path) as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        if not reader.fieldnames or "TermName" not in reader.fieldnames:
            raise VocabError(f"{terms_path} is not a MeSH descriptor-terms TSV (needs TermName).")
        for row in reader:
            ui = row["DescriptorUI"]
            rec = records.get(ui)
            if rec is None:
                name = row["DescriptorName"]
                top = MESH_TOP_LEVEL.get(name)
                rec = records[ui] = MeshRecord(ui, name, trees.get(ui) or ([top] if top else []))
            rec.terms.append(
                MeshTerm(
                    row["TermName"],
                    record_preferred=row.get("RecordPreferredTermYN") == "Y",
                    concept_preferred=row.get("ConceptPreferredTermYN") == "Y",
                    permuted=row.get("IsPermutedTermYN") == "Y",
                )
            )
    yield from records.values()


def parse_mesh_xml(source: Path | IO[bytes]) -> Iterator[MeshRecord]:
    """MeSH descriptors from NLM's descriptor XML (desc20XX.xml, nlmdescriptorrecordset DTD).

    Reads ``DescriptorRecordSet/DescriptorRecord`` elements one at a time (constant memory):
    ``DescriptorUI``, ``DescriptorName/String``, ``TreeNumberList/TreeNumber`` and every
    ``ConceptList/Concept/TermList/Term`` (``String`` plus the ``RecordPreferredTermYN``,
    ``ConceptPreferredTermYN`` and ``IsPermutedTermYN`` attributes). Descriptor references
    inside other elements (pharmacological actions, see-related) are ignored.
    """
    with contextlib.ExitStack() as stack:
        if isinstance(source, Path):
            try:
                with open(source, "rb") as fh:
                    magic = fh.read(2)
                opened: Any = (
                    gzip.open(source, "rb") if magic == b"\x1f\x8b" else open(source, "rb")  # noqa: SIM115
                )
                stream: IO[bytes] = stack.enter_context(opened)
            except OSError as err:
                raise VocabError(f"Cannot read {source}: {err.strerror}; check the path.") from err
        else:
            stream = source
        yield from _iter_mesh_xml(stream, source)


def _iter_mesh_xml(stream: IO[bytes], source: Path | IO[bytes]) -> Iterator[MeshRecord]:
    from lxml import etree

    seen = 0
    try:
        context = etree.iterparse(
            stream,
            events=("end",),
            tag="DescriptorRecord",
            resolve_entities=False,
            load_dtd=False,
            no_network=True,
            huge_tree=True,
        )
        for _event, elem in context:
            ui = (elem.findtext("DescriptorUI") or "").strip()
            name = (elem.findtext("DescriptorName/String") or "").strip()
            if ui and name:
                rec = MeshRecord(
                    ui,
                    name,
                    [
                        (t.text or "").strip()
                        for t in elem.iterfind("TreeNumberList/TreeNumber")
                        if t.text
                    ],
                )
                for term in elem.iterfind("ConceptList/Concept/TermList/Term"):
                    text = (term.findtext("String") or "").strip()
                    if text:
                        rec.terms.append(
                            MeshTerm(
                                text,
                                record_preferred=term.get("RecordPreferredTermYN") == "Y",
                                concept_preferred=term.get("ConceptPreferredTermYN") == "Y",
                                permuted=term.get("IsPermutedTermYN") == "Y",
                            )
                        )
                if not any(t.text == name for t in rec.terms):
                    rec.terms.insert(0, MeshTerm(name, True, True))
                seen += 1
                yield rec
            elem.clear()
            while elem.getprevious() is not None:
                del elem.getparent()[0]
    except etree.XMLSyntaxError as err:
        where = source if isinstance(source, Path) else "the MeSH XML"
        raise VocabError(
            f"{where} is not valid MeSH descriptor XML ({err}); download desc20XX.xml from NLM."
        ) from err
    if seen == 0:
        where = source if isinstance(source, Path) else "the MeSH XML"
        raise VocabError(
            f"{where} holds no DescriptorRecord elements; is it MeSH descriptor XML (desc20XX.xml)?"
        )


# --------------------------------------------------------------------------------------------
# Compact files
# --------------------------------------------------------------------------------------------


def _add(index: dict[str, dict[int, int]], key: str, item: int, kind: int) -> None:
    """Record that ``key`` names ``item`` by ``kind``, keeping only the best kind per item."""
    if not key:
        return
    kinds = index.setdefault(key, {})
    if kind < kinds.get(item, 99):
        kinds[item] = kind


def _encode(index: dict[str, dict[int, int]], width: int) -> dict[str, int | list[int]]:
    """``{key: {item: kind}}`` -> ``{key: code or [codes]}``, best kind first; code = item * width + kind."""
    out: dict[str, int | list[int]] = {}
    for key, kinds in index.items():
        codes = sorted((k, i) for i, k in kinds.items())
        out[key] = (
            codes[0][1] * width + codes[0][0]
            if len(codes) == 1
            else [i * width + k for k, i in codes]
        )
    return out


def compile_genes(genes: Iterable[GeneRecord]) -> dict[str, Any]:
    """Genes as ``{"genes": [[hgnc_id, symbol, name, locus_group]], "index": {key: codes}}``.

    A code is ``gene_number * 8 + kind`` with kind an index into :data:`GENE_KINDS`; a key
    naming one gene holds one code, a key naming several a list, best kind first.
    """
    genes = list(genes)
    family = _family_stems(genes)
    table: list[list[str]] = []
    index: dict[str, dict[int, int]] = {}
    for g in genes:
        i = len(table)
        table.append([g.hgnc_id, g.symbol, g.name, g.locus_group])
        fields: tuple[tuple[int, list[str]], ...] = (
            (0, [g.symbol]),
            (1, g.prev_symbols),
            (2, g.alias_symbols),
            (3, [g.name]),
            (4, g.prev_names),
            (5, g.alias_names),
            (6, g.ncbi_synonyms),
            (7, g.protein_names),
        )
        for kind, values in fields:
            for v in values:
                if kind >= NCBI_KIND and tuple(raw_tokens(v)) in family:
                    continue
                _add(index, gene_key(v), i, kind)
    groups = {i: [gid for gid, _ in g.groups] for i, g in enumerate(genes) if g.groups}
    group_names = {gid: name for g in genes for gid, name in g.groups}
    return {
        "genes": table,
        "index": _encode(index, 8),
        "groups": groups,
        "group_names": group_names,
    }


NCBI_KIND = GENE_KINDS.index("ncbi_synonym")
GROUP_PREFIX = "HGNC-GROUP:"  # ids of HGNC gene groups (gene families), e.g. HGNC-GROUP:601  # this kind and later ones come from NCBI Gene


def _family_stems(genes: Sequence[GeneRecord]) -> set[tuple[str, ...]]:
    """Token sequences that begin longer names of two or more genes: a family's stem ("cytochrome P450" of "cytochrome P450 2E1", "TCF" of TCF4 and
    TCF7). NCBI Gene lists such stems among one member's synonyms and protein names; taken as
    that gene's name they would put the family's other members on it, so they are not indexed."""
    owners: dict[tuple[str, ...], set[int]] = {}
    for i, g in enumerate(genes):
        names = [g.symbol, g.name, *g.prev_symbols, *g.alias_symbols, *g.prev_names]
        names += [*g.alias_names, *g.ncbi_synonyms, *g.protein_names]
        for name in names:
            toks = tuple(raw_tokens(name))
            for n in range(1, len(toks)):
                owners.setdefault(toks[:n], set()).add(i)
    return {stem for stem, who in owners.items() if len(who) >= 2}


def compile_mesh(records: Iterable[MeshRecord]) -> dict[str, Any]:
    """Descriptors as ``{"descriptors": [[ui, name, cats]], "index": {...}, "bag": {...}, ...}``.

    A code is ``descriptor_number * 2 + kind`` (0 = the descriptor's own name, 1 = an entry
    term). ``index`` is keyed by :func:`term_key`, ``bag`` by :func:`bag_key` (word order free),
    ``exact`` by the unfolded key (plurals kept) where folding made keys collide.

    ``bag_words`` lists every word of a ``bag`` key. Derived from the tree structure (disease
    descriptors only):

    - ``drug_induced``: ``{bag key: descriptor}``, the drug-induced form of a condition, keyed
      by the condition's words ("hepatitis" -> Chemical and Drug Induced Liver Injury, from
      its entry term "Hepatitis, Drug-Induced"); see :func:`_drug_induced`.
    - ``head``: ``{word: descriptor}``, a word that is no disease term of its own, completed to
      the most general disease descriptor with a two-word term containing it ("rigidity" ->
      Muscle Rigidity, "diabetes" -> Diabetes Mellitus): the one whose subtree is largest,
      then the one with most such terms; kept only when that one is unique.
    """
    table: list[list[str]] = []
    trees: list[list[str]] = []
    all_trees: list[list[str]] = []
    index: dict[str, dict[int, int]] = {}
    bag: dict[str, dict[int, int]] = {}
    exact: dict[str, dict[int, int]] = {}
    extend: dict[str, dict[int, int]] = {}
    uses: dict[tuple[str, int], int] = {}
    partners: dict[str, dict[int, set[str]]] = {}
    bags_of: list[set[str]] = []
    for rec in records:
        cats = rec.categories()
        if not cats:
            continue
        i = len(table)
        table.append([rec.ui, rec.name, cats])
        trees.append([t for t in rec.tree_numbers if t.startswith(DISEASE_TREES)])
        all_trees.append(list(rec.tree_numbers))
        texts = [rec.name] + [t.text for t in rec.terms]
        bags: set[str] = set()
        for n, text in enumerate(texts):
            kind = 0 if n == 0 or text == rec.name else 1
            _add(index, term_key(text), i, kind)
            key = bag_key(text)
            bags.add(key)
            _add(bag, key, i, kind)
            _add(exact, "".join(plain_tokens(text)), i, kind)
            words = key.split()
            if len(words) == 2 and words[0] != words[1]:
                # A numbered subtype ("Immunodeficiency 5") is no completion of its word for
                # the head table (it keeps its place in "extend").
                numbered = words[0].isdigit() or words[1].isdigit()
                for n_w, w in enumerate(words):
                    _add(extend, w, i, kind)
                    if not numbered:
                        uses[(w, i)] = uses.get((w, i), 0) + 1
                        partners.setdefault(w, {}).setdefault(i, set()).add(words[1 - n_w])
        bags_of.append(bags)
    # Plural folding merges some distinct descriptors (Amphetamine / Amphetamines); keep the
    # unfolded keys of those, so that the written number can still tell them apart.
    merged = {i for kinds in index.values() if len(kinds) > 1 for i in kinds}
    exact = {k: v for k, v in exact.items() if len(v) == 1 and next(iter(v)) in merged}
    size = _subtree_sizes(trees)
    head = _heads(extend, index, trees, size, uses)
    superset = _supersets(bags_of, trees, bag)
    # For each head word, the chosen descriptor and its siblings in the tree (as general as
    # it is) that also complete the word, with the other word of their two-word terms
    # ("hyperactivity": Psychomotor Agitation <- psychomotor, Hyperkinesis <- motor; both
    # under Dyskinesias), so that the context can choose between them.
    head_partners = {}
    for w, chosen in head.items():
        parents = {t.rsplit(".", 1)[0] for t in trees[chosen] if "." in t}
        peers = [
            [i, sorted(ws)]
            for i, ws in sorted(partners[w].items())
            if i == chosen or parents & {t.rsplit(".", 1)[0] for t in trees[i] if "." in t}
        ]
        if len(peers) > 1:
            head_partners[w] = peers
    # One word -> the descriptors with a two-word term that contains it ("rigidity" -> Muscle
    # Rigidity), kept where few descriptors share the word: completes names written short.
    extend = {k: v for k, v in extend.items() if len(v) <= 4 and k not in index}
    return {
        "descriptors": table,
        "index": _encode(index, 2),
        "bag": _encode(bag, 2),
        # Every word of a bag key: a phrase with another word has no bag key (a lookup filter).
        "bag_words": sorted({w for key in bag for w in key.split()}),
        **completion_tables(index, bag),
        "exact": _encode(exact, 2),
        "extend": _encode(extend, 2),
        "head": head,
        "head_partners": head_partners,
        "drug_induced": _drug_induced(table, trees, bags_of),
        "induced_child": _induced_children(table, trees),
        "superset": superset,
        # Pathologic processes (C23.550: Inflammation, Necrosis, Sclerosis ...): a name whose
        # head is one of these is a disease of the site its modifiers name.
        "processes": sorted(
            i for i, tns in enumerate(trees) if tns and all(t.startswith(PROCESS_TREE) for t in tns)
        ),
        "ancestors": _ancestors(table, all_trees),
        # How much of a name each word carries, for the parts of names (candidates.py).
        "word_weights": word_weights(bag),
    }


def _ancestors(table: list[list[str]], trees: list[list[str]]) -> dict[int, list[str]]:
    """Descriptor -> the UIs of every descriptor above it in any of its trees (Neoplasms and
    Neoplasms by Site above Breast Neoplasms), for filters that match a concept's descendants."""
    at = {t: row[0] for row, tns in zip(table, trees, strict=True) for t in tns}
    out: dict[int, list[str]] = {}
    for i, tns in enumerate(trees):
        above = {at[p] for t in tns for p in _prefixes(t) if p in at} - {table[i][0]}
        if above:
            out[i] = sorted(above)
    return out


def _prefixes(tree_number: str) -> list[str]:
    parts = tree_number.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


def completion_tables(index: Iterable[str], bag: Iterable[str]) -> dict[str, Any]:
    """Which :data:`COMPLETION_HEADS` complete a phrase to a MeSH key, as bit masks (bit i =
    head i): ``completions`` keyed by an index key less a final head ("renalfailure" ->
    syndrome? "hepatorenal" -> "hepatorenalsyndrome"), ``bag_completions`` by a bag key less
    one head word. The normaliser tries "name + head" for every head only where the mask
    says that the phrase is a key."""
    completions: dict[str, int] = {}
    for key in index:
        for bit, head in enumerate(COMPLETION_HEADS):
            if key.endswith(head):
                stem = key[: len(key) - len(head)]
                completions[stem] = completions.get(stem, 0) | 1 << bit
    bag_completions: dict[str, int] = {}
    for key in bag:
        words = key.split()
        for bit, head in enumerate(COMPLETION_HEADS):
            if head in words:
                rest = list(words)
                rest.remove(head)
                stem = " ".join(rest)
                bag_completions[stem] = bag_completions.get(stem, 0) | 1 << bit
    return {
        "completion_heads": list(COMPLETION_HEADS),
        "completions": completions,
        "bag_completions": bag_completions,
    }


def _subtree_sizes(trees: list[list[str]]) -> list[int]:
    """For each descriptor, how many descriptors sit below it in the disease trees."""
    owner = {tn: i for i, tns in enumerate(trees) for tn in tns}
    below: dict[int, set[int]] = {}
    for j, tns in enumerate(trees):
        for tn in tns:
            parts = tn.split(".")
            for k in range(1, len(parts)):
                i = owner.get(".".join(parts[:k]))
                if i is not None and i != j:
                    below.setdefault(i, set()).add(j)
    return [len(below.get(i, ())) for i in range(len(trees))]


def _heads(
    extend: dict[str, dict[int, int]],
    index: dict[str, dict[int, int]],
    trees: list[list[str]],
    size: list[int],
    uses: dict[tuple[str, int], int],
) -> dict[str, int]:
    out: dict[str, int] = {}
    for word, items in extend.items():
        if word in index or len(word) < 4 or word in BAG_STOP:
            continue
        # Largest subtree, then most two-word terms with the word ("Rigidity, Muscle",
        # "Muscular Rigidity", "Cogwheel Rigidity" ... all name Muscle Rigidity).
        ranked = sorted(
            ((size[i], uses[(word, i)], i) for i in items if trees[i] and (word, i) in uses),
            reverse=True,
        )
        if ranked and (len(ranked) == 1 or ranked[0][:2] > ranked[1][:2]):
            out[word] = ranked[0][2]
    return out


def _drug_induced(
    table: list[list[str]], trees: list[list[str]], keys_of: list[set[str]]
) -> dict[str, int]:
    """``{bag key without the cause: descriptor}`` for the drug-induced disease descriptors.

    A descriptor is drug-induced when its name says so ("Abnormalities, Drug-Induced") or it
    sits in C25 (Chemically-Induced Disorders) with a term naming a drug or other substance
    as the cause. Each of its terms that does, less the cause words, is a key: "Hepatitis,
    Drug-Induced" -> "hepatitis", "Drug-Induced Liver Injury" -> "injury liver". Keys that
    several descriptors share are dropped.
    """
    found: dict[str, set[int]] = {}
    for y, keys in enumerate(keys_of):
        if not trees[y]:
            continue
        name = set(tokens(table[y][1]))
        in_c25 = any(t.startswith(CHEMICALLY_INDUCED_TREE) for t in trees[y])
        if not (in_c25 or ("induced" in name and name & DRUG_CAUSE_WORDS)):
            continue
        for key in keys:
            words = key.split()
            rest = [w for w in words if w not in DRUG_CAUSE_WORDS]
            if rest and len(rest) < len(words):
                found.setdefault(" ".join(rest), set()).add(y)
    return {k: next(iter(ys)) for k, ys in sorted(found.items()) if len(ys) == 1}


def _supersets(
    bags_of: list[set[str]], trees: list[list[str]], bag: dict[str, dict[int, int]]
) -> dict[str, int | list[int]]:
    """``{bag key: descriptor(s)}`` for disease terms of three or four words, keyed by the term
    less one word: a name that leaves out one word of a term ("Duchenne dystrophy" ->
    Muscular Dystrophy, Duchenne; "stress incontinence" -> Urinary Incontinence, Stress).
    Keys that are terms of their own are left out. Where several descriptors share a key,
    the most general one (shallowest in the tree) is kept when it is the only one at its
    depth, else all of them, most general first, for the context to choose."""
    found: dict[str, set[int]] = {}
    for i, keys in enumerate(bags_of):
        if not trees[i]:
            continue
        for key in keys:
            words = key.split()
            if not 3 <= len(words) <= 4 or len(set(words)) < len(words):
                continue
            for w in words:
                rest = " ".join(x for x in words if x != w)
                if rest not in bag:
                    found.setdefault(rest, set()).add(i)
    out: dict[str, int | list[int]] = {}
    for key, items in found.items():
        if len(items) > 4:
            continue
        ranked = sorted(items, key=lambda i: (min(t.count(".") for t in trees[i]), i))
        depth = [min(t.count(".") for t in trees[i]) for i in ranked]
        out[key] = ranked[0] if len(ranked) == 1 or depth[0] < depth[1] else ranked
    return out


def _is_drug_induced(name: str, trees: list[str]) -> bool:
    words = set(tokens(name))
    in_c25 = any(t.startswith(CHEMICALLY_INDUCED_TREE) for t in trees)
    return in_c25 or ("induced" in words and bool(words & DRUG_CAUSE_WORDS))


def _induced_children(table: list[list[str]], trees: list[list[str]]) -> dict[int, int]:
    """``{descriptor: its drug-induced child}`` where a disease descriptor has exactly one
    drug-induced descriptor right below it in the tree whose name, less the cause words, is
    part of the parent's name (Congenital Abnormalities -> Abnormalities, Drug-Induced;
    not Movement Disorders -> Akathisia, Drug-Induced)."""
    owner = {tn: i for i, tns in enumerate(trees) for tn in tns}
    found: dict[int, set[int]] = {}
    for y, tns in enumerate(trees):
        if not tns or not _is_drug_induced(table[y][1], tns):
            continue
        name = set(bag_key(table[y][1]).split())
        rest = name - DRUG_CAUSE_WORDS
        if not rest or rest == name:
            continue  # the name does not say "drug-induced" (Lead Poisoning, Myotoxicity)
        for tn in tns:
            parent = owner.get(tn.rsplit(".", 1)[0]) if "." in tn else None
            if (
                parent is not None
                and parent != y
                and rest <= set(bag_key(table[parent][1]).split())
            ):
                found.setdefault(parent, set()).add(y)
    return {x: next(iter(ys)) for x, ys in sorted(found.items()) if len(ys) == 1}


def _frozen(value: Any) -> Any:
    """Lists as tuples, recursively (dicts kept)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


# The code tables of each data file: ``{key: code or [codes]}``.
PACKED_TABLES = {
    GENES_FILE: ("index",),
    MESH_FILE: ("index", "bag", "exact", "extend", "superset"),
}


def _packed(data: dict[str, Any], tables: Iterable[str]) -> dict[str, Any]:
    """The code lists of ``tables`` moved into one shared ``multi`` list, each replaced by its
    position p written as ``~p`` (a negative int): the tables then hold only strings and ints,
    so that the garbage collector never tracks them (a dict holding a tuple is walked by
    every full collection until one untracks it: 10-50 ms once in each process after
    loading, in the middle of the first normalisations)."""
    multi: list[list[int]] = []
    out = dict(data)
    for name in tables:
        if name not in data:
            continue
        table: dict[str, int] = {}
        for key, codes in data[name].items():
            if isinstance(codes, int):
                table[key] = codes
            else:
                table[key] = ~len(multi)
                multi.append(list(codes))
        out[name] = table
    out["multi"] = multi
    return out


def _write_data(path: Path, data: dict[str, Any]) -> None:
    # Plain dicts, tuples, strings and ints pickled (protocol 4, readable by every Python
    # 3.8+): loading takes about half the time of the same data as JSON, which the cold start
    # of every `fastbmrag query` pays. Tuples, not lists: a tuple of strings and ints (and a
    # dict of such) drops out of the garbage collector's tracking, so the ~66,000 rows and
    # code lists no longer make every full collection of the process walk them (30-120 ms
    # each, while normalising).
    raw = pickle.dumps(_frozen(data), protocol=4)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
        gz.write(raw)
    tmp.replace(path)


def version_from_name(path: Path | str, pattern: str) -> str | None:
    m = re.search(pattern, Path(path).name)
    return m.group(1) if m else None


def build_vocab(
    genes: Iterable[GeneRecord],
    mesh: Iterable[MeshRecord],
    out_dir: Path,
    sources: dict[str, dict[str, str]],
) -> dict[str, Any]:
    """Write manifest.json, genes.pickle.gz and mesh.pickle.gz into ``out_dir``; return the manifest.

    ``sources`` describes each input: ``{"hgnc": {"version": ..., "source": ...}, "mesh": ...}``.
    """
    gene_data = compile_genes(genes)
    mesh_data = compile_mesh(mesh)
    if not gene_data["genes"]:
        raise VocabError("The HGNC input holds no approved genes; check the file.")
    if not mesh_data["descriptors"]:
        raise VocabError("The MeSH input holds no C, F03 or D tree descriptors; check the file.")
    out_dir.mkdir(parents=True, exist_ok=True)
    n_disease = sum(1 for d in mesh_data["descriptors"] if "C" in d[2])
    n_chemical = sum(1 for d in mesh_data["descriptors"] if "D" in d[2])
    manifest: dict[str, Any] = {
        "format": FORMAT_VERSION,
        "built": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sources": sources,
        "counts": {
            "genes": len(gene_data["genes"]),
            "gene_keys": len(gene_data["index"]),
            "mesh_descriptors": len(mesh_data["descriptors"]),
            "disease_descriptors": n_disease,
            "chemical_descriptors": n_chemical,
            "mesh_keys": len(mesh_data["index"]),
        },
        "files": {"genes": GENES_FILE, "mesh": MESH_FILE},
    }
    _write_data(out_dir / GENES_FILE, _packed(gene_data, PACKED_TABLES[GENES_FILE]))
    _write_data(out_dir / MESH_FILE, _packed(mesh_data, PACKED_TABLES[MESH_FILE]))
    tmp = out_dir / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out_dir / MANIFEST)
    return manifest


def build_from_files(
    hgnc: Path,
    out_dir: Path,
    *,
    mesh_xml: Path | None = None,
    mesh_terms: Path | None = None,
    mesh_trees: Path | None = None,
    hgnc_version: str | None = None,
    mesh_version: str | None = None,
    hgnc_source: str | None = None,
    mesh_source: str | None = None,
    gene_info: Path | None = None,
    gene_info_source: str | None = None,
    gene_info_version: str | None = None,
) -> dict[str, Any]:
    """Build from local files: the HGNC TSV, either the MeSH XML or the two MeSH TSVs, and
    optionally NCBI Gene's gene_info (synonyms and protein names of HGNC's genes)."""
    if mesh_xml is not None:
        mesh: Iterable[MeshRecord] = parse_mesh_xml(mesh_xml)
        mesh_name = mesh_xml.name
    elif mesh_terms is not None and mesh_trees is not None:
        mesh = parse_mesh_tsv(mesh_terms, mesh_trees)
        mesh_name = f"{mesh_terms.name} + {mesh_trees.name}"
    else:
        raise VocabError("Give the MeSH descriptor XML, or both MeSH TSVs (terms and trees).")
    sources = {
        "hgnc": {
            "name": "HGNC complete set (genenames.org)",
            "file": hgnc.name,
            "version": hgnc_version
            or version_from_name(hgnc, r"(\d{4}-\d{2}(?:-\d{2})?)")
            or "unknown",
            "source": hgnc_source or str(hgnc),
        },
        "mesh": {
            "name": "NLM Medical Subject Headings (MeSH) descriptors",
            "file": mesh_name,
            "version": mesh_version
            or version_from_name(mesh_xml or mesh_terms or "", r"(\d{4})")
            or "unknown",
            "source": mesh_source or str(mesh_xml or mesh_terms),
        },
    }
    genes: Iterable[GeneRecord] = parse_hgnc_tsv(hgnc)
    if gene_info is not None:
        genes = with_gene_info(genes, parse_gene_info(gene_info))
        sources["ncbi_gene"] = {
            "name": "NCBI Gene gene_info (Synonyms, Other_designations)",
            "file": gene_info.name,
            "version": gene_info_version
            or version_from_name(gene_info, r"(\d{4}-\d{2}(?:-\d{2})?)")
            or "unknown",
            "source": gene_info_source or str(gene_info),
        }
    return build_vocab(genes, mesh, out_dir, sources)


# --------------------------------------------------------------------------------------------
# Download and rebuild (`fastbmrag vocab update`)
# --------------------------------------------------------------------------------------------

ENV_HGNC_URL = "FASTBMRAG_HGNC_URL"
ENV_MESH_URL = "FASTBMRAG_MESH_URL"
ENV_GENE_INFO_URL = "FASTBMRAG_GENE_INFO_URL"
DEFAULT_GENE_INFO_URL = (
    "https://ftp.ncbi.nlm.nih.gov/gene/DATA/GENE_INFO/Mammalia/Homo_sapiens.gene_info.gz"
)
DEFAULT_HGNC_URL = (
    "https://storage.googleapis.com/public-download-files/hgnc/tsv/tsv/hgnc_complete_set.txt"
)
# NLM publishes one descriptor file per MeSH year; {year} is the current year.
DEFAULT_MESH_URL = "https://nlmpubs.nlm.nih.gov/projects/mesh/MESH_FILES/xmlmesh/desc{year}.xml"


def hgnc_url(value: str | None = None) -> str:
    return value or os.environ.get(ENV_HGNC_URL) or DEFAULT_HGNC_URL


def gene_info_url(value: str | None = None) -> str:
    return value or os.environ.get(ENV_GENE_INFO_URL) or DEFAULT_GENE_INFO_URL


def mesh_url(value: str | None = None) -> str:
    url = value or os.environ.get(ENV_MESH_URL) or DEFAULT_MESH_URL
    return url.replace("{year}", str(datetime.now(UTC).year))


def download(url: str, dest: Path, *, timeout: float = 60.0) -> Path:
    """Stream ``url`` into ``dest`` (written whole or not at all)."""
    import httpx

    tmp = dest.with_name(dest.name + ".part")
    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as resp:
            if resp.status_code != 200:
                raise VocabError(
                    f"Cannot download {url}: HTTP {resp.status_code}; check the URL "
                    f"(--hgnc-url/--mesh-url) or pass a local file with --hgnc/--mesh."
                )
            with open(tmp, "wb") as fh:
                for chunk in resp.iter_bytes(1 << 20):
                    fh.write(chunk)
    except httpx.HTTPError as err:
        tmp.unlink(missing_ok=True)
        raise VocabError(
            f"Cannot download {url} ({err}); check your connection, or download it yourself "
            "and pass it with --hgnc/--mesh."
        ) from err
    tmp.replace(dest)
    return dest


def update_vocab(
    out_dir: Path,
    *,
    hgnc: Path | None = None,
    mesh: Path | None = None,
    hgnc_url_: str | None = None,
    mesh_url_: str | None = None,
    gene_info: Path | None = None,
    gene_info_url_: str | None = None,
) -> dict[str, Any]:
    """Rebuild the vocabularies into ``out_dir`` from local files or fresh downloads.

    ``hgnc``/``mesh``/``gene_info`` are local files (HGNC TSV; MeSH descriptor XML, plain or
    gzipped; NCBI Gene's human gene_info, plain or gzipped); whichever is missing is downloaded
    from its URL (argument > environment > default).
    """
    import tempfile

    out_dir.mkdir(parents=True, exist_ok=True)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".download-") as tmp:
        hgnc_source = str(hgnc) if hgnc else hgnc_url(hgnc_url_)
        mesh_source = str(mesh) if mesh else mesh_url(mesh_url_)
        if hgnc is None:
            hgnc = download(hgnc_source, Path(tmp) / "hgnc_complete_set.txt")
            hgnc_version = f"downloaded {today}"
        else:
            hgnc_version = version_from_name(hgnc, r"(\d{4}-\d{2}(?:-\d{2})?)") or "unknown"
        if mesh is None:
            name = mesh_source.rstrip("/").rsplit("/", 1)[-1] or "desc.xml"
            mesh = download(mesh_source, Path(tmp) / name)
        mesh_version = version_from_name(mesh, r"(\d{4})") or f"downloaded {today}"
        gene_info_source = str(gene_info) if gene_info else gene_info_url(gene_info_url_)
        gene_info_version = "local file" if gene_info else f"downloaded {today}"
        if gene_info is None:
            name = gene_info_source.rstrip("/").rsplit("/", 1)[-1] or "gene_info"
            gene_info = download(gene_info_source, Path(tmp) / name)
        return build_from_files(
            hgnc,
            out_dir,
            mesh_xml=mesh,
            hgnc_version=hgnc_version,
            mesh_version=mesh_version,
            hgnc_source=hgnc_source,
            mesh_source=mesh_source,
            gene_info=gene_info,
            gene_info_source=gene_info_source,
            gene_info_version=gene_info_version,
        )
