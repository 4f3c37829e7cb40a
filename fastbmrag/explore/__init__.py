"""Answers that use the graph itself, with no model call: where papers agree and where they
disagree (:mod:`~fastbmrag.graph.consensus`), paths between two entities
(:mod:`~fastbmrag.explore.paths`), an entity's card (:mod:`~fastbmrag.explore.cards`), follow-up
questions (:mod:`~fastbmrag.graph.follow_ups`), the collection at a glance and entity search
(:mod:`~fastbmrag.explore.overview`), and the edges as a networkx graph
(:mod:`~fastbmrag.explore.digraph`); what they share is :mod:`~fastbmrag.graph.edges`.

Everything is computed from the ledger's edges (who is related to whom, by which relation, in
which paper) and, for the sentences behind a hop, the stored payloads of those edges only.
"""

from fastbmrag.explore.cards import entity_card, vocabulary_card
from fastbmrag.explore.digraph import as_digraph
from fastbmrag.explore.overview import find_entities, overview
from fastbmrag.explore.paths import paths
from fastbmrag.graph.consensus import consensus, contradictions
from fastbmrag.graph.edges import Edge, Studies, ledger_edges, node_names, opposed
from fastbmrag.graph.follow_ups import follow_ups

__all__ = [
    "Edge",
    "Studies",
    "as_digraph",
    "consensus",
    "contradictions",
    "entity_card",
    "find_entities",
    "follow_ups",
    "ledger_edges",
    "node_names",
    "opposed",
    "overview",
    "paths",
    "vocabulary_card",
]
