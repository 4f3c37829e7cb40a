"""The vocabulary files' layout, which the build writes and the lookup reads: the format version,
the file names, the rows of the tables (:class:`Gene`, :class:`Descriptor`), what a gene index
code's kind means, the ids of gene groups, and the table of common English words both carry."""

from __future__ import annotations

import math
from typing import NamedTuple

# 3: every table present (NCBI Gene ids, processes, common words, completion masks, packed code
# lists); the loader refuses other versions and asks for `fastbmrag vocab update`.
FORMAT_VERSION = 3
MANIFEST = "manifest.json"
# the files of an earlier build, read whole where a user's cache still holds them; a build now
# writes the tables into one file that is opened, not loaded (vocab.disk.TABLES_FILE)
GENES_FILE = "genes.pickle.gz"
MESH_FILE = "mesh.pickle.gz"
SUPPLEMENTARY_FILE = "supplementary.pickle.gz"  # optional: MeSH's supplementary concepts


class Gene(NamedTuple):
    """A row of the genes table (``genes["genes"][i]``, stored as a plain sequence)."""

    id: str  # HGNC:5992
    symbol: str  # IL1B
    name: str  # interleukin 1 beta
    locus_group: str  # protein-coding gene

    @property
    def canonical(self) -> str:
        """What a name normalised to this gene is called: the approved symbol."""
        return self.symbol


class Descriptor(NamedTuple):
    """A row of a MeSH table, stored as a plain sequence: ``mesh["descriptors"][i]`` (diseases
    and chemicals) or ``mesh["process_descriptors"][i]`` (biological processes, no categories)."""

    id: str  # D004715
    name: str  # Endometriosis
    categories: str = ""  # the letters of its trees: C disease, F mental disorder, D chemical

    @property
    def canonical(self) -> str:
        """What a name normalised to this descriptor is called: its name."""
        return self.name


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
GROUP_PREFIX = "HGNC-GROUP:"  # ids of HGNC gene groups (gene families), e.g. HGNC-GROUP:601

# Words at or above this Zipf frequency (log10 of uses per billion words) are common English.
COMMON_ZIPF = 4.0


def common_words() -> dict[str, float]:
    """The English words of Zipf frequency :data:`COMMON_ZIPF` or more (about 7,000) with their
    frequency, from ``wordfreq``'s English lists: what the mention finder reads as everyday
    words. The build stores them with the vocabularies: loading ``wordfreq`` takes 0.3 s."""
    from wordfreq import get_frequency_dict

    return {
        w: round(math.log10(f) + 9, 2)
        for w, f in get_frequency_dict("en").items()
        if math.log10(f) + 9 >= COMMON_ZIPF
    }
