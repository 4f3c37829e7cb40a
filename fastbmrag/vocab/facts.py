"""What the vocabularies say of an id: its label, its broader concepts, how many concepts it
covers, and the facts an entity card shows."""

from __future__ import annotations

from fastbmrag.vocab.sources import GROUP_PREFIX
from fastbmrag.vocab.stages import Stages


class VocabularyFacts(Stages):
    """Lookups by id for :class:`~fastbmrag.vocab.normalizer.DictionaryNormalizer`."""

    def label(self, ontology_id: str) -> str | None:
        """A readable name for an HGNC or MeSH id: "IL1B (interleukin 1 beta)", "Endometriosis"."""
        if self._labels is None:
            labels = {row[0]: f"{row[1]} ({row[2]})" for row in self._genes}
            labels.update((row[0], row[1]) for row in self._desc)
            labels.update(self._group_names)
            self._labels = labels
        return self._labels.get(ontology_id)

    def ancestors(self, ontology_id: str) -> tuple[str, ...]:
        """What a concept belongs to: a MeSH descriptor's ancestors in its trees, an HGNC gene's
        gene groups (families). Edges carry them, so a filter on a broad concept finds its
        narrower ones."""
        index = self._id_index()
        i = index.get(ontology_id)
        if i is None:
            return ()
        if ontology_id.startswith("HGNC:"):
            return tuple(self._gene_groups.get(i, ()))
        return tuple(self._mesh_ancestors.get(i, ()))

    def covers(self, ontology_id: str) -> int:
        """How many concepts a filter on ``ontology_id`` covers: itself and every descriptor
        below it, or every gene of a gene group."""
        if self._covered is None:
            counts: dict[str, int] = {}
            for ids in (*self._mesh_ancestors.values(), *self._gene_groups.values()):
                for a in ids:
                    counts[a] = counts.get(a, 0) + 1
            self._covered = counts
        if ontology_id.startswith(GROUP_PREFIX):
            return self._covered.get(ontology_id, 0)
        return 1 + self._covered.get(ontology_id, 0)

    def group_name(self, group_id: str) -> str | None:
        return self._group_names.get(group_id)

    def _id_index(self) -> dict[str, int]:
        if self._ids is None:
            ids = {row[0]: i for i, row in enumerate(self._genes)}
            ids.update((row[0], i) for i, row in enumerate(self._desc))
            self._ids = ids
        return self._ids

    def facts(self, ontology_id: str) -> dict[str, str]:
        """What the vocabulary says of an id: an HGNC gene's symbol, name, locus group and gene
        groups; a MeSH descriptor's name, categories (disease, chemical) and broader
        descriptors."""
        if ontology_id in self._group_names:
            return {"source": "HGNC gene group", "name": self._group_names[ontology_id],
                    "genes": str(self.covers(ontology_id))}  # fmt: skip
        i = self._id_index().get(ontology_id)
        if i is None:
            return {}
        above = [self.label(a) or a for a in self.ancestors(ontology_id)]
        if ontology_id.startswith("HGNC:"):
            row = self._genes[i]
            return {"source": "HGNC", "symbol": row[1], "name": row[2], "locus_group": row[3],
                    "groups": "; ".join(above)}  # fmt: skip
        row = self._desc[i]
        kinds = {"C": "disease", "F": "mental disorder", "D": "chemical"}
        return {"source": "MeSH", "name": row[1],
                "categories": ", ".join(kinds[c] for c in row[2] if c in kinds),
                "broader": "; ".join(sorted(above))}  # fmt: skip

    def gene(self, hgnc_id: str) -> tuple[str, str] | None:
        """(symbol, name) of an HGNC id, e.g. "HGNC:5992" -> ("IL1B", "interleukin 1 beta")."""
        for row in self._genes:
            if row[0] == hgnc_id:
                return row[1], row[2]
        return None
