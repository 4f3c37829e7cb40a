"""What the vocabularies say of an id: its label, its broader concepts (a MeSH descriptor's
ancestors, a gene's groups), how many concepts a filter on it covers, its facts for an entity's
card, the name an edge carries for it, the HGNC id of an NCBI Gene id."""

from __future__ import annotations

import functools

from fastbmrag.vocab.layout import GROUP_PREFIX
from fastbmrag.vocab.tables import Tables


class Facts(Tables):
    """The loaded tables, read by id."""

    def label(self, ontology_id: str) -> str | None:
        """A readable name for an HGNC or MeSH id: "IL1B (interleukin 1 beta)", "Endometriosis"."""
        found = self._labels.get(ontology_id)
        if found is None and (row := self.supplementary.find(ontology_id)) is not None:
            return self.supplementary.names[row]
        return found

    def ancestors(self, ontology_id: str) -> tuple[str, ...]:
        """What a concept belongs to: a MeSH descriptor's ancestors in its trees, an HGNC gene's
        gene groups (families). Edges carry them, so a filter on a broad concept finds its
        narrower ones."""
        i = self._ids.get(ontology_id)
        if i is None and (row := self.supplementary.find(ontology_id)) is not None:
            heads = self.supplementary.heading_ids(row)  # its headings, and theirs
            return tuple(dict.fromkeys(a for h in heads for a in (h, *self.ancestors(h))))
        if i is None:
            p = self._process_ids.get(ontology_id)
            return () if p is None else tuple(self.process_above.get(p, ()))
        if ontology_id.startswith("HGNC:"):
            return tuple(self.gene_groups.get(i, ()))
        return tuple(self.mesh_ancestors.get(i, ()))

    def covers(self, ontology_id: str) -> int:
        """How many concepts a filter on ``ontology_id`` covers: itself and every descriptor
        (and supplementary concept) below it, or every gene of a gene group."""
        if ontology_id.startswith(GROUP_PREFIX):
            return self._covered.get(ontology_id, 0)
        i = self._ids.get(ontology_id)
        under = self.supp_under
        scr = int(under[i]) if i is not None and ontology_id[:1] == "D" and i < len(under) else 0
        return 1 + self._covered.get(ontology_id, 0) + scr

    def group_members(self, group_id: str) -> tuple[int, ...]:
        """The genes of an HGNC gene group, those of the groups below it included."""
        return self._members.get(group_id, ())

    def facts(self, ontology_id: str) -> dict[str, str]:
        """What the vocabulary says of an id: an HGNC gene's symbol, name, locus group and gene
        groups; a MeSH descriptor's name, categories (disease, chemical) and broader
        descriptors."""
        if ontology_id in self.group_names:
            return {"source": "HGNC gene group", "name": self.group_names[ontology_id],
                    "genes": str(self.covers(ontology_id))}  # fmt: skip
        i = self._ids.get(ontology_id)
        above = [self.label(a) or a for a in self.ancestors(ontology_id)]
        if i is None and (row := self.supplementary.find(ontology_id)) is not None:
            heads = [self.label(h) or h for h in self.supplementary.heading_ids(row)]
            return {"source": "MeSH supplementary concept", "name": self.supplementary.names[row],
                    "categories": _kinds(self.supplementary.categories(row)),
                    "headings": "; ".join(heads), "broader": "; ".join(sorted(above))}  # fmt: skip
        if i is None:
            p = self._process_ids.get(ontology_id)
            if p is None:
                return {}
            return {"source": "MeSH", "name": self.process_row(p).name,
                    "categories": "biological process", "broader": "; ".join(sorted(above))}  # fmt: skip
        if ontology_id.startswith("HGNC:"):
            g = self.gene_row(i)
            return {"source": "HGNC", "symbol": g.symbol, "name": g.name, "locus_group": g.locus_group,
                    "groups": "; ".join(above)}  # fmt: skip
        d = self.descriptor(i)
        return {"source": "MeSH", "name": d.name, "categories": _kinds(d.categories),
                "broader": "; ".join(sorted(above))}  # fmt: skip

    def gene_of_ncbi(self, ncbi_id: str) -> str | None:
        """The HGNC id of a human NCBI Gene id, by HGNC's cross-reference ("7124" -> "HGNC:11892")."""
        i = self.entrez.get(ncbi_id)
        return None if i is None else self.gene_row(i).id

    def name_of(self, ontology_id: str) -> str | None:
        """The name an edge carries for an id: an HGNC gene's symbol, a MeSH descriptor's name."""
        i = self._ids.get(ontology_id)
        if i is not None:
            row = self.gene_row(i) if ontology_id.startswith("HGNC:") else self.descriptor(i)
            return row.canonical
        if (scr := self.supplementary.find(ontology_id)) is not None:
            return self.supplementary.names[scr]
        p = self._process_ids.get(ontology_id)
        return None if p is None else self.process_row(p).name

    # ---- the indexes these read, built on first use -----------------------------------------

    @functools.cached_property
    def _labels(self) -> dict[str, str]:
        labels = {hgnc: f"{symbol} ({name})" for hgnc, symbol, name, _ in self.genes}
        labels.update((ui, name) for ui, name, _categories in self.desc)
        labels.update((ui, name) for ui, name in self.processes_desc)
        labels.update(self.group_names)
        return labels

    @functools.cached_property
    def _ids(self) -> dict[str, int]:
        ids = {hgnc_id: i for i, (hgnc_id, *_) in enumerate(self.genes)}
        ids.update((ui, i) for i, (ui, *_) in enumerate(self.desc))
        return ids

    @functools.cached_property
    def _process_ids(self) -> dict[str, int]:
        return {ui: i for i, (ui, _name) in enumerate(self.processes_desc)}

    @functools.cached_property
    def _covered(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        above = (*self.mesh_ancestors.values(), *self.gene_groups.values())
        for ids in (*above, *self.process_above.values()):
            for a in ids:
                counts[a] = counts.get(a, 0) + 1
        return counts  # and a descriptor's supplementary concepts: counted by the build

    @functools.cached_property
    def _members(self) -> dict[str, tuple[int, ...]]:
        members: dict[str, list[int]] = {}
        for i, groups in self.gene_groups.items():
            for g in groups:
                members.setdefault(g, []).append(i)
        return {g: tuple(m) for g, m in members.items()}


def _kinds(categories: str) -> str:
    kinds = {"C": "disease", "F": "mental disorder", "D": "chemical"}
    return ", ".join(kinds[c] for c in categories if c in kinds)
