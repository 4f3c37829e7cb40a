"""The indexer: papers -> draft -> normalise -> refine -> embed -> commit.

Modules: :mod:`~fastbmrag.index.options` (what a run can be told),
:mod:`~fastbmrag.index.run` (the run: classify, work, commit, summary),
:mod:`~fastbmrag.index.paper` (one paper's model work), :mod:`~fastbmrag.index.extract` (stage
1, the draft), :mod:`~fastbmrag.index.refine` (stage 2, the main text) and
:mod:`~fastbmrag.index.edges` (the two ends of an edge and the point it is stored as).

LLM budget per paper, however many relations it has:

* 1 chat call (draft), plus 1 chat call (refine) when it has main text and at
  least one relation found a similar chunk;
* 1 embedding request for chunks + relation queries (full-text papers) and 1 for
  the final descriptions (a request holds up to ``embed_batch`` texts).

Papers flow through a bounded number of worker tasks, so memory stays flat on
any input size; finished papers are committed in groups of ``commit_every`` (32:
store write, flush, then one ledger transaction), so a run killed at any instant
loses at most the papers in flight and the group not yet committed, which the
next run redoes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastbmrag.util.lazy import lazy

if TYPE_CHECKING:
    from fastbmrag.index.edges import build_edges
    from fastbmrag.index.options import UpdateOptions
    from fastbmrag.index.run import RunSummary, index_papers

__all__ = ["RunSummary", "UpdateOptions", "build_edges", "index_papers"]
# name -> its module, imported on first use: a command that only declares its options
# (`update --help`) does not load the indexer, its model client or the findings model
_LAZY = {
    "build_edges": "fastbmrag.index.edges",
    "UpdateOptions": "fastbmrag.index.options",
    "RunSummary": "fastbmrag.index.run",
    "index_papers": "fastbmrag.index.run",
}
__getattr__ = lazy(__name__, _LAZY)
