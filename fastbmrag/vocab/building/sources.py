"""Readers of the vocabularies' official files: HGNC's complete set (TSV), NCBI Gene's gene_info,
MeSH descriptors (NLM's XML or TSV extracts), into records the build compiles."""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fastbmrag.errors import VocabError
from fastbmrag.vocab.layout import GROUP_PREFIX
from fastbmrag.vocab.supplementary import read_records

# MeSH tree prefixes kept, and what they mean to the normaliser.
DISEASE_TREES = ("C", "F03")


CHEMICAL_TREES = ("D",)


MENTAL_TREE = "F03"
# Biological processes, the entity type "pathway": biochemical, metabolic, cellular, genetic and
# immune phenomena, and the growth of vessels (Apoptosis, Autophagy, Signal Transduction, DNA
# Methylation, Angiogenesis ...). Kept apart from the diseases' and chemicals' tables.
PROCESS_TREES = ("G02.111", "G03", "G04", "G05", "G09.330", "G12")


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
    entrez_id: str = ""  # NCBI Gene's id of the gene, as HGNC cross-references it ("7124")


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

    def is_process(self) -> bool:
        """A biological process (:data:`PROCESS_TREES`) that is no disease or chemical."""
        return not self.categories() and any(t.startswith(PROCESS_TREES) for t in self.tree_numbers)


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
                entrez_id=(row.get("entrez_id") or "").strip(),
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


def parse_mesh_supplementary(path: Path) -> dict[str, tuple[str, list[str], list[str]]]:
    """MeSH's supplementary concept records: ``{C id: (name, [the descriptors it is mapped
    to], [the entry terms of its preferred concept])}``, from NLM's supp20XX.xml (read one
    record at a time) or a TSV of those columns (``scr_id, scr_name, heading_descriptor_ids,
    entry_terms``, lists ``|``-joined), either plain or gzipped."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(2)
        opener: Any = gzip.open if magic == b"\x1f\x8b" else open
        with opener(path, "rb") as stream:
            first = stream.read(64).lstrip()
        if not first.startswith(b"<"):
            with opener(path, "rt", encoding="utf-8", newline="") as text:
                reader = csv.reader(text, delimiter="\t", quoting=csv.QUOTE_NONE)
                out = read_records(reader)
        else:
            with opener(path, "rb") as stream:
                out = _supplementary_xml(stream)
    except OSError as err:
        raise VocabError(f"Cannot read {path}: {err.strerror}; check the path.") from err
    except (UnicodeDecodeError, csv.Error) as err:
        raise VocabError(
            f"{path} is no MeSH supplementary TSV ({err}); give NLM's supp20XX.xml."
        ) from err
    if not out:
        raise VocabError(
            f"{path} holds no supplementary concept record; it should be NLM's supp20XX.xml."
        )
    return out


def _supplementary_xml(stream: IO[bytes]) -> dict[str, tuple[str, list[str], list[str]]]:
    from lxml import etree

    out: dict[str, tuple[str, list[str], list[str]]] = {}
    try:
        for _event, elem in etree.iterparse(
            stream, events=("end",), tag="SupplementalRecord", resolve_entities=False,
            load_dtd=False, no_network=True, huge_tree=True,
        ):  # fmt: skip
            ui = (elem.findtext("SupplementalRecordUI") or "").strip()
            name = (elem.findtext("SupplementalRecordName/String") or "").strip()
            heads = [
                (d.text or "").strip().lstrip("*")
                for d in elem.iterfind("HeadingMappedToList/HeadingMappedTo/"
                                       "DescriptorReferredTo/DescriptorUI")  # fmt: skip
            ]
            terms = [
                (t.text or "").strip()
                for t in elem.iterfind("ConceptList/Concept[@PreferredConceptYN='Y']/TermList/"
                                       "Term/String")  # fmt: skip
            ]
            if ui and name:
                out[ui] = (name, [h for h in heads if h], [t for t in terms if t and t != name])
            elem.clear()
            while elem.getprevious() is not None:
                del elem.getparent()[0]
    except etree.XMLSyntaxError as err:
        raise VocabError(
            f"Not valid MeSH supplementary XML ({err}); download supp20XX.xml from NLM."
        ) from err
    return out


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
