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

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastbmrag.errors import VocabError
from fastbmrag.vocab.building.gene_families import family_stems, stem_groups
from fastbmrag.vocab.building.mesh_tables import (
    PROCESS_TREE,
    completes_word,
    completion_tables,
    drug_induced_forms,
    head_words,
    induced_children,
    subtree_sizes,
    supersets,
)
from fastbmrag.vocab.building.sources import (
    DISEASE_TREES,
    PROCESS_TREES,
    GeneRecord,
    MeshRecord,
    parse_gene_info,
    parse_hgnc_tsv,
    parse_mesh_supplementary,
    parse_mesh_tsv,
    parse_mesh_xml,
    with_gene_info,
)
from fastbmrag.vocab.disk import DERIVED, TABLES_FILE, write_tables
from fastbmrag.vocab.layout import (
    FORMAT_VERSION,
    GENE_KINDS,
    GENES_FILE,
    MANIFEST,
    MESH_FILE,
    SUPPLEMENTARY_FILE,
    common_words,
)
from fastbmrag.vocab.rules.candidates import word_weights
from fastbmrag.vocab.rules.keys import (
    bag_key,
    gene_key,
    plain_tokens,
    raw_tokens,
    term_key,
)
from fastbmrag.vocab.supplementary import KEYS_FILE, compile_supplementary, supplementary_rows

# The kinds that are names, not symbols.
NAME_KINDS = (
    GENE_KINDS.index("name"),
    GENE_KINDS.index("prev_name"),
    GENE_KINDS.index("alias_name"),
)
# A protein named by its mass in kilodaltons ("p27", "p50"): many proteins weigh the same.
_MASS_NAME_RE = re.compile(r"[pP]\d{2,3}")
_PARENS_RE = re.compile(r"\s*\([^()]*(?:\([^()]*\)[^()]*)*\)")


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Parsers
# --------------------------------------------------------------------------------------------


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
    family = family_stems(genes)
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
        names = " ".join([g.name, *g.prev_names, *g.alias_names, *g.protein_names]).lower()
        for kind, values in fields:
            for v in values:
                if kind >= NCBI_KIND and tuple(raw_tokens(v)) in family:
                    continue
                if (
                    kind > 0
                    and _MASS_NAME_RE.fullmatch(v)
                    and not re.search(rf"(?<![a-z0-9]){re.escape(v.lower())}(?![0-9])", names)
                ):
                    continue  # a protein's mass ("p27") that its gene's own names do not write
                _add(index, gene_key(v), i, kind)
                if "(" in v and kind in NAME_KINDS:
                    # HGNC's names put asides in parentheses ("ubiquitin carboxyl-terminal
                    # esterase L1 (ubiquitin thiolesterase)", "... homolog (S. cerevisiae)"):
                    # the name is also written without them.
                    bare = _PARENS_RE.sub("", v)
                    if bare.strip():
                        _add(index, gene_key(bare), i, kind)
    groups = {i: [gid for gid, _ in g.groups] for i, g in enumerate(genes) if g.groups}
    groups_of_stems = stem_groups(genes, family)
    group_names = {gid: name for g in genes for gid, name in g.groups}
    return {
        "genes": table,
        "index": _encode(index, 8),
        # NCBI Gene id -> gene: PubTator3's gene ids become HGNC's
        "entrez": {g.entrez_id: i for i, g in enumerate(genes) if g.entrez_id},
        "groups": groups,
        "group_names": group_names,
        "stem_groups": groups_of_stems,
    }


NCBI_KIND = GENE_KINDS.index("ncbi_synonym")  # this kind and later ones come from NCBI Gene


def compile_mesh(records: Iterable[MeshRecord]) -> dict[str, Any]:
    """Descriptors as ``{"descriptors": [[ui, name, cats]], "index": {...}, "bag": {...}, ...}``.

    A code is ``descriptor_number * 2 + kind`` (0 = the descriptor's own name, 1 = an entry
    term). ``index`` is keyed by :func:`term_key`, ``bag`` by :func:`bag_key` (word order free),
    ``exact`` by the unfolded key (plurals kept) where folding made keys collide.

    ``bag_words`` lists every word of a ``bag`` key. Derived from the tree structure (disease
    descriptors only):

    - ``drug_induced``: ``{bag key: descriptor}``, the drug-induced form of a condition, keyed
      by the condition's words ("hepatitis" -> Chemical and Drug Induced Liver Injury, from
      its entry term "Hepatitis, Drug-Induced"); see :func:`drug_induced_forms`.
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
    completing: set[tuple[str, int]] = set()  # (word, chemical it completes to)
    uses: dict[tuple[str, int], int] = {}
    partners: dict[str, dict[int, set[str]]] = {}
    bags_of: list[set[str]] = []
    processes: list[MeshRecord] = []
    for rec in records:
        cats = rec.categories()
        if not cats:
            if rec.is_process():
                processes.append(rec)
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
                    if "C" not in cats and completes_word(w, text):
                        completing.add((w, i))
                    if not numbered:
                        uses[(w, i)] = uses.get((w, i), 0) + 1
                        partners.setdefault(w, {}).setdefault(i, set()).add(words[1 - n_w])
        bags_of.append(bags)
    # Plural folding merges some distinct descriptors (Amphetamine / Amphetamines); keep the
    # unfolded keys of those, so that the written number can still tell them apart.
    merged = {i for kinds in index.values() if len(kinds) > 1 for i in kinds}
    exact = {k: v for k, v in exact.items() if len(v) == 1 and next(iter(v)) in merged}
    size = subtree_sizes(trees)
    head = head_words(extend, index, trees, size, uses)
    superset = supersets(bags_of, trees, bag)
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
    # Chemicals are kept only where each one's term completes the word (see mesh_tables.completes_word): a
    # word that also begins a receptor's or an enzyme's name completes to no one of them.
    extend = {k: v for k, v in extend.items() if len(v) <= 4 and k not in index}
    for k, v in extend.items():
        chemicals = [i for i in v if "C" not in table[i][2]]
        if any((k, i) not in completing for i in chemicals):
            for i in chemicals:
                del v[i]
    extend = {k: v for k, v in extend.items() if v}
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
        "drug_induced": drug_induced_forms(table, trees, bags_of),
        "induced_child": induced_children(table, trees),
        "superset": superset,
        # Pathologic processes (C23.550: Inflammation, Necrosis, Sclerosis ...): a name whose
        # head is one of these is a disease of the site its modifiers name.
        "processes": sorted(
            i for i, tns in enumerate(trees) if tns and all(t.startswith(PROCESS_TREE) for t in tns)
        ),
        "ancestors": _ancestors(table, all_trees),
        # How much of a name each word carries, for the parts of names (candidates.py).
        "word_weights": word_weights(bag),
        # How common each common English word is, for names found in free text (mentions.py).
        "common_words": common_words(),
        **process_tables(processes),
    }


def process_tables(records: list[MeshRecord]) -> dict[str, Any]:
    """The biological processes (the "pathway" type), apart from the diseases' and chemicals'
    tables so that no stage of theirs reads them: ``process_descriptors`` ([ui, name]),
    ``process_index`` ({term key: codes}, as ``index``) and ``process_ancestors`` ({row: the
    UIs of the processes above it})."""
    table = [[rec.ui, rec.name] for rec in records]
    index: dict[str, dict[int, int]] = {}
    for i, rec in enumerate(records):
        for n, text in enumerate([rec.name] + [t.text for t in rec.terms]):
            _add(index, term_key(text), i, 0 if n == 0 or text == rec.name else 1)
    trees = [[t for t in rec.tree_numbers if t.startswith(PROCESS_TREES)] for rec in records]
    return {
        "process_descriptors": table,
        "process_index": _encode(index, 2),
        "process_ancestors": _ancestors(table, trees),
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
    MESH_FILE: ("index", "bag", "exact", "extend", "superset", "process_index"),
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


def write_vocab_tables(
    out_dir: Path,
    genes: dict[str, Any],
    mesh: dict[str, Any],
    manifest: dict[str, Any],
    supplementary: dict[str, Any] | None = None,
) -> None:
    """Write the tables as the loader opens them (:mod:`fastbmrag.vocab.disk`), with the
    indexes it would otherwise build on first use and (``supplementary``, compiled) the
    supplementary concepts' rows, and remove the files of an earlier build."""
    from fastbmrag.vocab.facts import Facts

    facts = Facts(genes, mesh, manifest)
    mesh = {**mesh, "longest_key": max(max(map(len, mesh["index"]), default=0),
                                       max(map(len, mesh["bag"]), default=0))}  # fmt: skip
    derived = {name: getattr(facts, name) for name in DERIVED if name != "_spellings"}
    derived["_spellings"] = facts.spellings.by_start
    parts = {"genes": genes, "mesh": mesh}
    if supplementary:
        rows = supplementary_rows(supplementary)
        parts["supplementary"] = {"rows": rows, "index": {r[0]: i for i, r in enumerate(rows)}}
    write_tables(out_dir / TABLES_FILE, parts, derived)
    for old in (GENES_FILE, MESH_FILE, SUPPLEMENTARY_FILE):
        (out_dir / old).unlink(missing_ok=True)


def version_from_name(path: Path | str, pattern: str) -> str | None:
    m = re.search(pattern, Path(path).name)
    return m.group(1) if m else None


def build_vocab(
    genes: Iterable[GeneRecord],
    mesh: Iterable[MeshRecord],
    out_dir: Path,
    sources: dict[str, dict[str, str]],
    supplementary: dict[str, tuple[str, list[str], list[str]]] | None = None,
) -> dict[str, Any]:
    """Write manifest.json, genes.pickle.gz, mesh.pickle.gz and (with ``supplementary``, MeSH's
    supplementary concepts: C id -> name, heading descriptors, entry terms)
    supplementary.pickle.gz into ``out_dir``; return the manifest.

    ``sources`` describes each input: ``{"hgnc": {"version": ..., "source": ...}, "mesh": ...}``.
    """
    gene_data = compile_genes(genes)
    mesh_data = compile_mesh(mesh)
    if not gene_data["genes"]:
        raise VocabError("The HGNC input holds no approved genes; check the file.")
    if not mesh_data["descriptors"]:
        raise VocabError("The MeSH input holds no C, F03 or D tree descriptors; check the file.")
    supp = (
        compile_supplementary(supplementary, mesh_data["descriptors"], mesh_data["ancestors"])
        if supplementary
        else None
    )
    if supp:  # read by every filter on a descriptor: with the MeSH table
        mesh_data["supplementary_under"] = supp.pop("under")
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
            "process_descriptors": len(mesh_data["process_descriptors"]),
            "mesh_keys": len(mesh_data["index"]),
            "mesh_supplementary": len(supp["names"].split("\n")) if supp else 0,
        },
        "files": {"tables": TABLES_FILE, **({"supplementary": KEYS_FILE} if supp else {})},
    }
    if supp:
        (out_dir / KEYS_FILE).write_bytes(supp.pop("keys"))
    else:
        (out_dir / KEYS_FILE).unlink(missing_ok=True)
    write_vocab_tables(
        out_dir,
        _frozen(_packed(gene_data, PACKED_TABLES[GENES_FILE])),
        _frozen(_packed(mesh_data, PACKED_TABLES[MESH_FILE])),
        manifest,
        supp,
    )
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
    mesh_supplementary: Path | None = None,
    mesh_supplementary_source: str | None = None,
    mesh_supplementary_version: str | None = None,
) -> dict[str, Any]:
    """Build from local files: the HGNC TSV, either the MeSH XML or the two MeSH TSVs, and
    optionally NCBI Gene's gene_info (synonyms and protein names of HGNC's genes) and MeSH's
    supplementary concept records."""
    if mesh_xml is not None:
        mesh: Iterable[MeshRecord] = parse_mesh_xml(mesh_xml)
        mesh_name = mesh_xml.name
    elif mesh_terms is not None and mesh_trees is not None:
        mesh = parse_mesh_tsv(mesh_terms, mesh_trees)
        mesh_name = f"{mesh_terms.name} + {mesh_trees.name}"
    else:
        raise VocabError("Give the MeSH descriptor XML, or both MeSH TSVs (terms and trees).")
    day = r"(\d{4}-\d{2}(?:-\d{2})?)"
    sources = {
        "hgnc": _source("HGNC complete set (genenames.org)", hgnc, hgnc.name, day,
                        hgnc_version, hgnc_source),
        "mesh": _source("NLM Medical Subject Headings (MeSH) descriptors", mesh_xml or mesh_terms,
                        mesh_name, r"(\d{4})", mesh_version, mesh_source),
    }  # fmt: skip
    genes: Iterable[GeneRecord] = parse_hgnc_tsv(hgnc)
    if gene_info is not None:
        genes = with_gene_info(genes, parse_gene_info(gene_info))
        sources["ncbi_gene"] = _source(
            "NCBI Gene gene_info (Synonyms, Other_designations)", gene_info, gene_info.name,
            day, gene_info_version, gene_info_source,
        )  # fmt: skip
    supplementary = None
    if mesh_supplementary is not None:
        supplementary = parse_mesh_supplementary(mesh_supplementary)
        sources["mesh_supplementary"] = _source(
            "NLM MeSH supplementary concept records (names, entry terms, heading descriptors)",
            mesh_supplementary, mesh_supplementary.name, r"(\d{4})",
            mesh_supplementary_version, mesh_supplementary_source,
        )  # fmt: skip
    return build_vocab(genes, mesh, out_dir, sources, supplementary)


def _source(
    name: str, path: Path | None, file: str, pattern: str, version: str | None, source: str | None
) -> dict[str, str]:
    """A source file's entry in the manifest: its version as given, else as its file name
    says (``pattern``), else "unknown"."""
    found = version or version_from_name(path or "", pattern) or "unknown"
    return {"name": name, "file": file, "version": found, "source": source or str(path)}
