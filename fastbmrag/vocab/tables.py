"""HGNC's and MeSH's tables, loaded from the compact files
:mod:`fastbmrag.vocab.building.compile` writes (their layout: :mod:`fastbmrag.vocab.layout`), with
their rows read by name."""

from __future__ import annotations

import functools
import gzip
import json
import pickle
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from fastbmrag.errors import VocabError
from fastbmrag.vocab.disk import open_tables
from fastbmrag.vocab.layout import FORMAT_VERSION, MANIFEST, Descriptor, Gene
from fastbmrag.vocab.rules.candidates import Spellings
from fastbmrag.vocab.rules.keys import BAG_STOP, term_key
from fastbmrag.vocab.supplementary import KEYS_FILE, Supplementary

T = TypeVar("T", bound="Tables")


def read_data(path: Path) -> Any:
    """A vocabulary data file: a gzipped pickle."""
    return pickle.loads(gzip.decompress(path.read_bytes()))  # noqa: S301 - written by the build into the package or the user's own cache


class Tables:
    """The tables, as loaded: code tables (a code, or ~p for the code list at position p of a
    ``multi`` table) and rows (:class:`~fastbmrag.vocab.layout.Gene`,
    :class:`~fastbmrag.vocab.layout.Descriptor`). Read-only once loaded."""

    def __init__(self, genes: dict[str, Any], mesh: dict[str, Any], manifest: dict[str, Any]):
        self.manifest = manifest
        self.directory: Path | None = None  # where the files are (from_dir): read on use
        # the supplementary concepts' rows where the tables file holds them (from_dir)
        self.opened_supplementary: dict[str, Any] | None = None
        # how many supplementary concepts each descriptor covers, by row
        self.supp_under = np.frombuffer(mesh.get("supplementary_under", b""), dtype=np.int32)
        # Code tables: a code, or ~p for the code list at position p of "multi".
        self.gene_multi: Sequence[Sequence[int]] = genes["multi"]
        self.mesh_multi: Sequence[Sequence[int]] = mesh["multi"]
        # the tables' rows as stored (sequences); read them as named rows with gene_row(i),
        # descriptor(i), process_row(i) (layout.Gene, layout.Descriptor)
        self.genes: list[Sequence[str]] = genes["genes"]
        self.gene_index: dict[str, int | Sequence[int]] = genes["index"]
        self.desc: list[Sequence[str]] = mesh["descriptors"]
        self.mesh_index: dict[str, int | Sequence[int]] = mesh["index"]
        self.mesh_bag: dict[str, int | Sequence[int]] = mesh["bag"]
        # Every word of a bag key (and the stop words bag keys leave out): a phrase with any
        # other word cannot be a bag key, so its key need not be built.
        self.bag_words: frozenset[str] = frozenset(mesh["bag_words"]) | BAG_STOP
        self.completions: dict[str, int] = mesh["completions"]
        self.bag_completions: dict[str, int] = mesh["bag_completions"]
        self.mesh_exact: dict[str, int | Sequence[int]] = mesh["exact"]
        self.mesh_extend: dict[str, int | Sequence[int]] = mesh["extend"]
        self.mesh_head: dict[str, int] = mesh["head"]
        self.head_partners: dict[str, list[list[Any]]] = mesh["head_partners"]
        self.drug_induced: dict[str, int] = mesh["drug_induced"]
        self.induced_child: dict[int, int] = mesh["induced_child"]
        self.superset: dict[str, int | Sequence[int]] = mesh["superset"]
        self.processes: frozenset[int] = frozenset(mesh["processes"])
        self.mesh_ancestors: dict[int, list[str]] = mesh["ancestors"]
        self.common_words: dict[str, float] = mesh["common_words"]
        self.word_weight_table: dict[str, Any] = mesh["word_weights"]
        # biological processes (the "pathway" type), apart from the tables the stages read
        self.processes_desc: list[Sequence[str]] = mesh["process_descriptors"]
        self.process_index: dict[str, int | Sequence[int]] = mesh["process_index"]
        self.process_above: dict[int, list[str]] = mesh["process_ancestors"]
        self.entrez: dict[str, int] = genes["entrez"]
        self.gene_groups: dict[int, list[str]] = genes["groups"]
        self.group_names: dict[str, str] = genes["group_names"]
        keys: dict[str, list[str]] = {}
        for group_id, group_name in self.group_names.items():
            keys.setdefault(term_key(group_name), []).append(group_id)
        # a gene group's name as a key, where it names one group only
        self.group_keys: dict[str, str] = {k: v[0] for k, v in keys.items() if len(v) == 1}
        self.stem_groups: dict[str, str] = genes["stem_groups"]
        # the longest index or bag key of MeSH, where the build stored it
        self.longest_mesh_key: int | None = mesh.get("longest_key")

    @functools.cached_property
    def spellings(self) -> Spellings:
        """The spelling index of MeSH's keys, built the first time a name is no term as
        written (the build's, or 15 ms to build)."""
        built = self.__dict__.get("_spellings")
        return Spellings(self.mesh_index) if built is None else Spellings.indexed(built)

    @classmethod
    def from_dir(cls: type[T], path: Path) -> T:
        """Load manifest.json and the two data files it names from ``path``."""
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            built = int(manifest.get("format", 1))
            if built != FORMAT_VERSION:
                which = "a newer" if built > FORMAT_VERSION else "an older"
                raise VocabError(
                    f"The vocabularies in {path} were built by {which} fastbmrag (format "
                    f"{built}, this one reads {FORMAT_VERSION}); run `fastbmrag vocab update` to "
                    "rebuild them" + (", or upgrade fastbmrag." if built > FORMAT_VERSION else ".")
                )
            files = manifest["files"]
            derived: dict[str, Any] = {}
            supplementary = None
            if "tables" in files:  # opened, read where looked up (vocab.disk)
                parts, derived = open_tables(path / files["tables"])
                genes, mesh = parts["genes"], parts["mesh"]
                supplementary = parts.get("supplementary")
            else:  # as an earlier build wrote them: loaded whole
                genes = read_data(path / files["genes"])
                mesh = read_data(path / files["mesh"])
        except (
            OSError, ValueError, KeyError, EOFError, pickle.UnpicklingError, sqlite3.Error
        ) as err:  # fmt: skip
            raise VocabError(
                f"Cannot load the vocabularies in {path} ({err}); "
                "run `fastbmrag vocab update` to rebuild them, or reinstall fastbmrag."
            ) from err
        tables = cls(genes, mesh, manifest)
        tables.__dict__.update(derived)  # the indexes Facts builds on first use, built
        tables.opened_supplementary = supplementary
        tables.directory = path  # the supplementary concepts are read from it on first use
        return tables

    @functools.cached_property
    def supplementary(self) -> Supplementary:
        """MeSH's supplementary concepts (:mod:`fastbmrag.vocab.supplementary`): their keys
        mapped, their rows opened with the tables (or, as an earlier build wrote them, read
        from their file the first time a lookup or an id needs them); none where not built."""
        name = self.manifest.get("files", {}).get("supplementary")
        where = self.directory
        if not name or where is None:
            return Supplementary.empty(self.desc)

        def failed(err: Exception) -> VocabError:
            return VocabError(
                f"Cannot load the supplementary concepts in {where} ({err}); "
                "run `fastbmrag vocab update` to rebuild them, or reinstall fastbmrag."
            )

        def data() -> Any:
            try:
                return read_data(where / name)
            except (OSError, ValueError, KeyError, EOFError, pickle.UnpicklingError) as err:
                raise failed(err) from err

        try:
            keys = np.memmap(where / KEYS_FILE, dtype="<u8", mode="r")
        except (OSError, ValueError) as err:
            raise failed(err) from err
        opened = self.opened_supplementary
        if opened is not None:
            return Supplementary(keys, None, self.desc, opened["rows"], opened["index"])
        return Supplementary(keys, data, self.desc)

    def gene_row(self, i: int) -> Gene:
        return Gene(*self.genes[i])

    def descriptor(self, i: int) -> Descriptor:
        """A descriptor's row; numbers past the descriptors are supplementary concepts'."""
        if i < len(self.desc):
            return Descriptor(*self.desc[i])
        return Descriptor(*self.supplementary.row(i - len(self.desc)))

    def process_row(self, i: int) -> Descriptor:
        return Descriptor(*self.processes_desc[i])
