"""The administrative operations of a workspace (:class:`fastbmrag.RAG`): what a collection
holds (`status`), which update runs now, whether its store opens, finishing what a killed
command left half done, deleting papers and exporting the graph."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from fastbmrag.declared import check, option, options_of
from fastbmrag.errors import InputError
from fastbmrag.store.collection import Collection
from fastbmrag.store.status import collection_status
from fastbmrag.util.wording import counted, option_named

if TYPE_CHECKING:
    from typing import Unpack

    from fastbmrag.keywords import ExportKeywords
    from fastbmrag.store.workspace import Workspace


@dataclass
class StatusOptions:
    """What `status` is told."""

    max_failed: int | None = option(100, low=0, whole=True, cli=False,
                                    help="Failed papers listed at most (None: every one).")  # fmt: skip

    def __post_init__(self) -> None:
        check(self)


def status(rag: Workspace, *, max_failed: int | None = 100) -> dict[str, Any]:
    """What the collection holds (from the ledger); finishes an operation a killed command
    left half done when no other command holds the collection (``interrupted``)."""
    StatusOptions(max_failed)
    with rag.ledger() as coll:
        journal = coll.ledger.journal()
    interrupted = finish_interrupted(rag, journal)
    with rag.ledger() as coll:
        # the vocabularies say where a supplementary concept sits, if the graph has one
        vocab = rag.normalizer() if coll.ledger.supplementary_ids() else None
        stats = collection_status(coll, max_failed=max_failed, normalizer=vocab)
        placed = [i for i in coll.ledger.supplementary_ids() if vocab and vocab.ancestors(i)]
    if placed:
        stats["supplementary"]["edges_without_headings"] = _unplaced(rag, placed)
    stats["interrupted"] = interrupted
    return stats


def _unplaced(rag: Workspace, ids: list[str]) -> int | None:
    """The edges whose end is one of these supplementary concepts but carries no headings
    (stored before the vocabularies knew them: `update --force` places them); None when the
    store cannot be opened now (status says why)."""
    from fastbmrag.errors import StoreError
    from fastbmrag.store.base import Filter, Match

    unplaced = Filter(should=tuple(
        Filter(must=(Match(f"{end}_key", any_of=tuple(ids)), Match(f"{end}_ancestors")))
        for end in ("source", "target")
    ))  # fmt: skip
    try:
        with Collection.reader(rag.working_dir, rag.collection_name, command="status",
                               busy_timeout=0, **rag.where()) as coll:  # fmt: skip
            return coll.count(unplaced)
    except StoreError:
        return None


def update_running(rag: Workspace) -> str | None:
    """While an update or sync runs (its run recorded, not ended): which, since when, and
    how many papers it has committed so far; None when none runs."""
    with rag.ledger() as coll:
        run = coll.ledger.runs.last()
        if run is None or run.ended_at is not None or not _alive(run.pid):
            return None  # none runs, or its process was killed
        done = coll.ledger.runs.papers_done_since(run.started_at)
    since = run.started_at.replace("T", " ").removesuffix("+00:00")
    command = run.command if run.command.startswith("fastbmrag") else f"fastbmrag {run.command}"
    return (
        f"`{command}` is updating collection '{coll.name}' since {since} UTC "
        f"({counted(done, 'paper')} committed so far)"
    )


def check_store(rag: Workspace) -> str | None:
    """Open the collection's store and close it: StoreError, one line with the fix, when
    it is damaged or lost; why it was not opened (another process holds it, its volume is
    full), None when it opened."""
    from fastbmrag.errors import DiskFull, StoreBusy

    try:  # no wait: status says who holds it
        with Collection.reader(rag.working_dir, rag.collection_name, command="status",
                               busy_timeout=0, **rag.where()):  # fmt: skip
            return None
    except StoreBusy as err:
        return f"held by {err.holder or 'another process'}"
    except DiskFull as err:
        return str(err).split(": free some space")[0].replace("The volume", "its volume")


def finish_interrupted(rag: Workspace, journal: dict[str, str]) -> dict[str, Any] | None:
    """None when nothing was left, else the operations (``delete``: papers whose deletion
    was cut short; ``commit``: papers whose indexing was, indexed again next run) with
    ``finished`` true, or false and ``by`` saying which command will finish them. With the
    lock held, the journal is the running writer's own work in flight: nothing to report."""
    from fastbmrag.errors import LockedError, StoreBusy

    if not journal:
        return None
    ops = {op: sum(1 for o in journal.values() if o == op) for op in ("delete", "commit")}
    try:
        with rag.writer():
            pass  # opening for writing finishes it (Collection.recover)
    except LockedError:
        return None
    except StoreBusy as err:
        return {**ops, "finished": False, "by": f"the next update, sync or delete ({err})"}
    return {**ops, "finished": True, "by": "this status"}


def delete(rag: Workspace, paper_ids: str | Sequence[str]) -> tuple[list[str], list[str], int]:
    """Remove papers and their edges: (ids deleted, ids not in the collection, edges
    removed); a string is one id. InputError when none of the ids is there (nothing
    changes)."""
    if isinstance(paper_ids, str):  # one id, not its characters
        paper_ids = [paper_ids]
    if not isinstance(paper_ids, Sequence) or not all(isinstance(i, str) for i in paper_ids):
        raise InputError(
            f'paper_ids must be a paper id or a list of them, as text ("PMID:12345"), got '
            f"{paper_ids!r}"
        )
    ids = list(dict.fromkeys(str(i).strip() for i in paper_ids))
    if not all(ids):
        raise InputError("An empty paper id was given: pass the ids `fastbmrag export` lists")
    with rag.writer(command="fastbmrag delete") as coll:
        known = list(coll.ledger.paper_states(ids))
        # a PubMed id names the paper whose pmid it is, too (a PMC full text, a CSV row)
        by_pmid = {i: coll.papers_of_pmids([i]) for i in ids if i not in known}
        known = list(dict.fromkeys([*known, *(p for ps in by_pmid.values() for p in ps)]))
        unknown = [i for i in ids if i not in known and not by_pmid.get(i)]
        if not known:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            held = list(coll.ledger.paper_states(v for i in ids for v in _id_spellings(i)))
            hint = f" (it holds {', '.join(held[:5])}: pass those)" if held else ""
            raise InputError(
                f"None of the paper ids ({shown}) is in collection '{coll.name}'{hint}: "
                f"check the ids (an export with {option_named('fmt')} csv lists them)"
            )
        run_id = coll.ledger.runs.begin("fastbmrag delete", {"paper_ids": known})
        removed = coll.delete_papers(known)
        if run_id is not None:
            coll.ledger.runs.end(run_id, {"papers_deleted": len(known), "edges_removed": removed})
    return known, unknown, removed


EXPORT_FORMATS = ("graphml", "csv")


@dataclass
class ExportOptions:
    """How the graph is exported (`fastbmrag export`, :meth:`fastbmrag.RAG.export`)."""

    fmt: str | None = option(
        None, flag="--format", short="-f", choices=EXPORT_FORMATS,
        help="graphml (Cytoscape, Gephi, networkx) or csv (one row per edge with its payload) "
        "[default: from the output file's suffix].",
    )  # fmt: skip
    raw: bool = option(
        False, flag="--raw",
        help="CSV: write cells beginning with =, +, -, @ as they are (by default they get a "
        "leading ' so that a spreadsheet shows them as text instead of running them as "
        "formulas).",
    )  # fmt: skip

    def __post_init__(self) -> None:
        check(self)


def export(
    rag: Workspace, fmt: Any, out: IO[Any], **options: Unpack[ExportKeywords]
) -> tuple[int, int]:
    """Write the graph to ``out`` as ``fmt``, GraphML (``out`` binary) or CSV (text): (nodes,
    edges); ``options`` are :class:`ExportOptions` fields: CSV cells that a spreadsheet would
    run as formulas get a leading ``'`` unless ``raw``."""
    from fastbmrag.store.export import write_csv, write_graphml

    opts = options_of(ExportOptions, {**dict(options), "fmt": fmt})
    if opts.fmt is None:
        raise InputError(f"Name the export format: {option_named('fmt')} graphml or csv")
    with rag.reader(command="fastbmrag export") as coll:
        if opts.fmt == "graphml":
            return write_graphml(coll, out)
        return 0, write_csv(coll, out, raw=opts.raw)


def _alive(pid: int | None) -> bool:
    """Whether process ``pid`` runs (unknown: assumed so)."""
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _id_spellings(paper_id: str) -> list[str]:
    """The other way a PMID is written as a paper id: "PMID:123" for "123" and back."""
    head, sep, rest = paper_id.partition(":")
    if sep and head.lower() == "pmid":
        return [rest.strip()]
    return [f"PMID:{paper_id}"] if paper_id.isdigit() else []
