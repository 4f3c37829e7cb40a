"""The graph as the ledger holds it, which both a query and the graph commands read: its edges
and nodes (:mod:`~fastbmrag.graph.edges`), where papers agree and disagree about a pair
(:mod:`~fastbmrag.graph.consensus`), and the follow-up questions an answer offers
(:mod:`~fastbmrag.graph.follow_ups`)."""
