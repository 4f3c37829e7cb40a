"""An indexing run: papers classified (new, changed, failed, unchanged), worked on by a bounded
number of tasks, committed in groups; its summary (:class:`RunSummary`)."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from fastbmrag import config
from fastbmrag.errors import (
    EXIT_OK,
    EXIT_PARTIAL,
    FastbmragError,
    LLMError,
    LLMUnavailable,
    ModelNotFound,
)
from fastbmrag.index.grounding import DICTIONARY, NOT_YET, PUBTATOR
from fastbmrag.index.options import UpdateOptions
from fastbmrag.index.paper import PaperOutcome, index_paper, one_line
from fastbmrag.llm.base import LLMClient
from fastbmrag.papers.model import Paper
from fastbmrag.papers.pubtator import (
    MAX_IDS,
    Document,
    PubTatorClient,
    PubTatorUnavailable,
    request_for,
)
from fastbmrag.store.collection import Collection, PaperEdges
from fastbmrag.util.wording import counted
from fastbmrag.vocab.base import Normalizer

log = logging.getLogger(__name__)


@dataclass
class RunSummary:
    read: int = 0
    indexed: int = 0
    unchanged: int = 0
    failed: int = 0
    edges: int = 0
    refined_edges: int = 0
    dropped_relations: int = 0  # drafted relations dropped (invalid, or citing no valid sentence)
    uncited_refinements: int = 0  # refined descriptions without a valid citation, not used
    drafted_from_main_text: int = 0  # papers without an abstract, drafted from their opening
    self_loops: int = 0  # drafted relations whose ends normalised to one entity (dropped)
    retracted: int = 0  # papers whose record says they were retracted, newly flagged
    deleted: int = 0  # papers a MEDLINE update file deleted, their edges removed
    wall_seconds: float = 0.0
    dry_run: bool = False
    would_index: dict[str, int] = field(default_factory=dict)  # dry run: reason -> papers
    failures: list[tuple[str, str]] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)
    max_chat_calls_per_paper: int = 0
    max_embed_requests_per_paper: int = 0
    servers: dict[str, dict[str, int]] = field(default_factory=dict)  # several: per server
    stopped: str | None = None  # why the run ended early (interrupted, the server gone ...)
    # indexed papers by where their names' ids came from: "pubtator" (PubTator3's annotations
    # of the paper), "not_yet" (it has a PMID, NCBI has not annotated it yet), "dictionary"
    grounding: dict[str, int] = field(default_factory=dict)
    pubtator_unavailable: str | None = None  # why PubTator3 was not used, when it could not be
    # what reading the input did (ReadReport.to_dict: skipped rows and files by reason, ...)
    input: dict[str, Any] = field(default_factory=dict)
    strict: bool = False  # UpdateOptions.strict: unusable input makes the run exit 1

    @property
    def unusable(self) -> int:
        """Input rows, records or files skipped as unusable (defects, not routine skips)."""
        return int(self.input.get("unusable", 0))

    @property
    def exit_code(self) -> int:
        return EXIT_PARTIAL if self.failed or (self.strict and self.unusable) else EXIT_OK

    def tokens_per_paper(self) -> tuple[float, float]:
        n = max(self.indexed + self.failed, 1)
        prompt = sum(u.get("prompt_tokens", 0) for u in self.llm.values())
        completion = sum(u.get("completion_tokens", 0) for u in self.llm.values())
        return prompt / n, completion / n

    def line(self) -> str:
        if self.dry_run:
            todo = (
                ", ".join(f"{n:,} {why}" for why, n in sorted(self.would_index.items()))
                or "nothing"
            )
            return (
                f"dry run: {counted(self.read, 'paper')} read{self._skipped()}; would index "
                f"{sum(self.would_index.values()):,} ({todo}); {self.unchanged:,} unchanged"
            )
        calls = {k: v.get("calls", 0) for k, v in self.llm.items()}
        calls_txt = ", ".join(f"{k} {n:,}" for k, n in calls.items() if n) or "none"
        p, c = self.tokens_per_paper()
        stopped = f"stopped early ({self.stopped}): " if self.stopped else ""
        return (
            f"{stopped}{counted(self.read, 'paper')} read{self._skipped()}: "
            f"{self.indexed:,} indexed, "
            f"{self.unchanged:,} unchanged, {self.failed:,} failed; {counted(self.edges, 'edge')} "
            f"({self.refined_edges:,} refined"
            f"{self._drops()}); LLM calls: {calls_txt}; tokens/paper: {p:,.0f} prompt + "
            f"{c:,.0f} completion{self._servers()}{self._grounding()}; {self.wall_seconds:.1f} s"
        )

    def _skipped(self) -> str:
        skipped = sum(self.input.get("skipped", {}).values())
        if not skipped:
            return ""
        said = [f"{self.unusable:,} unusable"] if self.unusable else []
        said += ["strict: exit 1"] if self.strict and self.unusable else []
        return f", {skipped:,} skipped" + (f" ({'; '.join(said)})" if said else "")

    def _grounding(self) -> str:
        g = self.grounding
        if not (g.get(PUBTATOR) or g.get(NOT_YET) or self.pubtator_unavailable):
            return ""
        return (
            f"; ids: {g.get(PUBTATOR, 0):,} papers by PubTator3, {g.get(DICTIONARY, 0):,} by the "
            f"dictionaries, {g.get(NOT_YET, 0):,} not yet annotated"
        )

    def _servers(self) -> str:
        if len(self.servers) < 2:
            return ""
        each = ", ".join(
            f"{where} {s['requests']:,} requests ({s['failures']:,} failed)"
            for where, s in self.servers.items()
        )
        return f"; servers: {each}"

    def _drops(self) -> str:
        said = [
            (self.drafted_from_main_text, "paper", "without an abstract drafted from main text"),
            (self.dropped_relations, "drafted relation", "dropped (invalid or uncited)"),
            (self.self_loops, "self-loop", "after normalisation dropped"),
            (self.uncited_refinements, "refinement", "without a valid citation not used"),
            (self.retracted, "retracted paper", "flagged"),
            (self.deleted, "deleted citation", "removed"),
        ]
        return "".join(f"; {counted(n, noun)} {rest}" for n, noun, rest in said if n)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["line"] = self.line()
        d["exit_code"] = self.exit_code
        p, c = self.tokens_per_paper()
        d["prompt_tokens_per_paper"] = round(p, 1)
        d["completion_tokens_per_paper"] = round(c, 1)
        return d


def _classify(paper: Paper, collection: Collection | None, force: bool) -> tuple[str, str]:
    """(reason to index or "unchanged", content hash); no collection yet -> every paper is new."""
    digest = paper.content_hash()
    state = collection.ledger.paper_state(paper.paper_id) if collection is not None else None
    if state is None:
        return "new", digest
    if state.status == "done" and state.content_hash == digest:
        return ("forced" if force else "unchanged"), digest
    if state.status == "done":
        return "changed", digest
    return ("retry failed" if state.status == "failed" else "unfinished"), digest


def index_papers(
    papers: Iterable[Paper],
    collection: Collection | None,
    llm: LLMClient,
    normalizer: Normalizer,
    options: UpdateOptions | None = None,
    *,
    progress: bool = True,
    total: int | None = None,
    pubtator: PubTatorClient | None = None,
) -> RunSummary:
    """Index ``papers`` into ``collection``. Runs its own event loop and closes ``llm`` at the end.
    With ``pubtator``, the names of papers with a PMID or PMCID are grounded on PubTator3's
    annotations first (fetched 100 papers at a time, before their model work starts).

    Before the first paper that needs work is touched, the model server and models are
    checked (``preflight``) and the embedding size is checked against the collection; both
    raise with a one-line fix. A run with nothing to do contacts no server.
    """
    opts = options or UpdateOptions()
    annotations = _Annotations(pubtator)
    ctrl_c = _CtrlC()
    try:
        return asyncio.run(
            _run(papers, collection, llm, normalizer, opts, progress, total, annotations, ctrl_c)
        )
    except asyncio.CancelledError as err:
        if not ctrl_c.pressed:
            raise
        stopped = KeyboardInterrupt()  # the Ctrl-C that cancelled the run, as Ctrl-C
        stopped.summary = getattr(err, "summary", None)  # type: ignore[attr-defined]
        raise stopped from None


async def _run(
    papers: Iterable[Paper],
    collection: Collection | None,
    llm: LLMClient,
    normalizer: Normalizer,
    opts: UpdateOptions,
    progress: bool,
    total: int | None,
    annotations: _Annotations,
    ctrl_c: _CtrlC,
) -> RunSummary:
    summary = RunSummary(dry_run=opts.dry_run)
    started = time.perf_counter()
    try:
        if opts.dry_run:
            for paper in papers:
                if paper.deleted:  # counted only where the collection holds the paper
                    held = collection.papers_of_pmids([paper.paper_id]) if collection else []
                    if held:
                        summary.would_index["delete"] = summary.would_index.get("delete", 0) + 1
                    continue
                summary.read += 1
                why, _ = _classify(paper, collection, opts.force)
                if why == "unchanged":
                    summary.unchanged += 1
                else:
                    summary.would_index[why] = summary.would_index.get(why, 0) + 1
            return summary

        if collection is None:
            raise ValueError("index_papers needs a collection unless dry_run is set")
        # a run of its own, unless a sync began one (and ends it)
        own = collection.ledger.runs.begin("update", {"options": asdict(opts)})
        ctrl_c.install()
        flagged = len(collection.ledger.retracted())  # a record that says so: with its commit
        retracted: list[str] = []
        deleted: list[str] = []
        try:
            with _Progress(progress, total) as bar:
                await _work(
                    _noting(papers, retracted, deleted),
                    collection,
                    llm,
                    normalizer,
                    opts,
                    summary,
                    bar,
                    annotations,
                    ctrl_c,
                )
            if ctrl_c.pressed:  # its cancellation was lost on the way: the run stops all the same
                raise asyncio.CancelledError
            # what the records say of retractions and deletions, once their papers are in
            collection.mark_retracted(retracted, "input")  # papers indexed before, unchanged
            summary.retracted = len(collection.ledger.retracted()) - flagged
            present = collection.papers_of_pmids(deleted)  # by paper id or by pmid
            collection.delete_papers(present)
            summary.deleted = len(present)
            collection.optimize()
        except BaseException as err:  # the run ends here: say why in the ledger, then raise
            summary.stopped = (
                "interrupted" if isinstance(err, KeyboardInterrupt | asyncio.CancelledError)
                else str(err) or type(err).__name__
            )  # fmt: skip
            if isinstance(err, FastbmragError | KeyboardInterrupt | asyncio.CancelledError):
                err.summary = summary  # type: ignore[union-attr]  # the --json of a stopped run
            raise
        finally:
            ctrl_c.remove()
            _account(summary, llm, started)
            if own is not None:
                collection.ledger.runs.end(own, summary.to_dict())
        return summary
    finally:
        _account(summary, llm, started)
        await llm.aclose()


class _CtrlC:
    """Ctrl-C during a run, in the main thread: it is noted and cancels the run's task. The note
    stops the run even where the cancellation is lost on its way (a library that swallows one
    while it shields a close): no paper is taken up after it, and the run ends interrupted. A
    second Ctrl-C stops at once."""

    def __init__(self) -> None:
        self.pressed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._before: Any = None

    def install(self) -> None:
        """From the run's task: Ctrl-C noted (in the main thread; in another, the caller's own
        Ctrl-C handling)."""
        if threading.current_thread() is not threading.main_thread():
            return
        before = signal.getsignal(signal.SIGINT)
        if before is signal.SIG_IGN:  # started with Ctrl-C ignored (nohup): left so
            return
        loop, task = asyncio.get_running_loop(), asyncio.current_task()

        def pressed() -> None:
            if self.pressed:
                raise KeyboardInterrupt
            self.pressed = True
            if task is not None:
                task.cancel()

        loop.add_signal_handler(signal.SIGINT, pressed)
        self._loop, self._before = loop, before

    def remove(self) -> None:
        if self._loop is not None:
            self._loop.remove_signal_handler(signal.SIGINT)
            signal.signal(signal.SIGINT, self._before)  # the event loop runner's, as it was
            self._loop = None


def _noting(papers: Iterable[Paper], retracted: list[str], deleted: list[str]) -> Iterator[Paper]:
    """``papers`` without the deleted citations, which go to ``deleted``; the ids of retracted
    papers go to ``retracted``."""
    for paper in papers:
        if paper.deleted:
            deleted.append(paper.paper_id)
            continue
        if paper.retraction == "retracted":
            retracted.append(paper.paper_id)
        yield paper


def _account(summary: RunSummary, llm: LLMClient, started: float) -> None:
    """The model calls, tokens (and, with several servers, each one's requests) and time."""
    summary.llm = llm.accounting.to_dict()
    servers = getattr(llm, "servers", None)
    summary.servers = servers() if servers is not None else {}
    summary.wall_seconds = time.perf_counter() - started


async def _work(
    papers: Iterable[Paper],
    collection: Collection,
    llm: LLMClient,
    normalizer: Normalizer,
    opts: UpdateOptions,
    summary: RunSummary,
    bar: _Progress,
    annotations: _Annotations,
    ctrl_c: _CtrlC,
) -> None:
    queue: asyncio.Queue[_Item | None] = asyncio.Queue(maxsize=opts.concurrency * 2)
    # finished papers waiting for their (shared) commit, with what they add to the summary
    group: list[tuple[PaperEdges, PaperOutcome, str]] = []
    last_commit = time.monotonic()

    def commit() -> None:
        # One store flush and one ledger transaction for the group: a crash before it loses
        # only these papers' writes (they stay pending), and their LLM answers are cached. The
        # summary counts a paper once it is committed.
        nonlocal last_commit
        if group:
            collection.commit_papers([edges for edges, _, _ in group])
            for _, outcome, state in group:
                _count(summary, outcome, state)
            group.clear()
            collection.optimize()  # an index build once enough points lack one
        last_commit = time.monotonic()

    async def worker() -> None:  # after a Ctrl-C, no paper is taken up
        while not ctrl_c.pressed and (item := await queue.get()) is not None:
            paper, digest, grounded = item
            try:
                outcome, points, refs = await index_paper(
                    paper, llm, normalizer, opts, grounded.document
                )
            except (LLMUnavailable, ModelNotFound):
                raise  # the server is gone: stop the run (finished papers are committed)
            except LLMError as err:  # this paper's embeddings failed after their retries
                outcome, points, refs = (
                    PaperOutcome(paper.paper_id, "failed", error=str(err)),
                    [],
                    [],
                )
            if outcome.status == "done":
                study = (paper.design, ";".join(paper.organisms), paper.design_from,
                         paper.organisms_from)  # fmt: skip
                edges = PaperEdges(
                    paper.paper_id, digest, points, refs, grounded.ledger_entry, study,
                    retracted=paper.retraction == "retracted",
                )
                group.append((edges, outcome, grounded.state))
                if (
                    len(group) >= opts.commit_every
                    or time.monotonic() - last_commit >= opts.commit_seconds
                ):
                    commit()
            else:
                error = one_line(outcome.error or "unknown error")
                collection.ledger.mark_failed(paper.paper_id, digest, error)
                summary.failed += 1
                summary.failures.append((paper.paper_id, error))
                log.warning("paper %s failed: %s", paper.paper_id, error)
            summary.max_chat_calls_per_paper = max(
                summary.max_chat_calls_per_paper, outcome.chat_calls
            )
            summary.max_embed_requests_per_paper = max(
                summary.max_embed_requests_per_paper, outcome.embed_requests
            )
            bar.advance()

    waiting: list[tuple[Paper, str]] = []  # papers whose annotations are fetched together

    async def send() -> None:
        found = await asyncio.to_thread(annotations.fetch, [p for p, _ in waiting])
        summary.pubtator_unavailable = annotations.unavailable
        for paper, digest in waiting:
            await queue.put((paper, digest, found[paper.paper_id]))
        waiting.clear()

    async def produce(tg: asyncio.TaskGroup) -> None:
        started = False
        for paper in papers:
            if ctrl_c.pressed:
                return
            summary.read += 1
            why, digest = _classify(paper, collection, opts.force)
            if why == "unchanged":
                summary.unchanged += 1
                bar.advance()
                continue
            if not started:
                # First paper with work to do: check the server, the models and the vector
                # size before touching it (a run with nothing to do contacts nobody).
                await llm.preflight()
                collection.ensure_vector_size(await llm.embedding_dim())
                for _ in range(max(opts.concurrency, 1)):
                    tg.create_task(worker())
                started = True
            waiting.append((paper, digest))
            if len(waiting) >= MAX_IDS:
                await send()
        if started:
            await send()
            for _ in range(max(opts.concurrency, 1)):
                await queue.put(None)

    try:
        # A worker that raises (the server went away) cancels the producer and the others.
        async with asyncio.TaskGroup() as tg:
            tg.create_task(produce(tg))
    except BaseExceptionGroup as group_err:
        raise group_err.exceptions[0] from None
    finally:
        commit()  # what finished before an error or Ctrl-C is kept


def _count(summary: RunSummary, outcome: PaperOutcome, state: str) -> None:
    """A committed paper in the summary: its edges, what was dropped, where its ids came from."""
    summary.grounding[state] = summary.grounding.get(state, 0) + 1
    summary.indexed += 1
    summary.edges += outcome.edges
    summary.refined_edges += outcome.refined
    summary.dropped_relations += outcome.dropped
    summary.uncited_refinements += outcome.uncited
    summary.drafted_from_main_text += outcome.from_main_text
    summary.self_loops += outcome.self_loops


@dataclass(frozen=True)
class _Grounded:
    """What PubTator3 holds for a paper: its annotations, where they came from."""

    state: str  # PUBTATOR, NOT_YET or DICTIONARY
    document: Document | None = None
    request: str = ""  # the request key, for a paper with a PMID or PMCID

    @property
    def ledger_entry(self) -> tuple[str, str] | None:
        """(state, request) for the ledger, which a later sync re-grounds from."""
        return (self.state, self.request) if self.request else None


_Item = tuple[Paper, str, _Grounded]


class _Annotations:
    """PubTator3's annotations of a run's papers; none once the service cannot be reached (one
    warning says so, the run goes on with the dictionaries)."""

    def __init__(self, client: PubTatorClient | None) -> None:
        self.client = client
        self.unavailable: str | None = None

    def fetch(self, papers: Sequence[Paper]) -> dict[str, _Grounded]:
        requests = {p.paper_id: request_for(p.pmid, p.pmcid, full=p.has_main_text) for p in papers}
        out = {pid: _Grounded(DICTIONARY) for pid in requests}
        asked = {pid: r for pid, r in requests.items() if r is not None}
        if self.client is None or self.unavailable or not asked:
            return out
        try:
            docs = self.client.documents(list(asked.values()))
        except PubTatorUnavailable as err:
            self.unavailable = str(err)
            log.warning(
                "PubTator3 cannot be used (%s): names are grounded with the dictionaries in "
                "this run (%s=0 skips it)", err, config.ENV_PUBTATOR,
            )  # fmt: skip
            return out
        for pid, req in asked.items():
            doc = docs.get(req.key)
            out[pid] = _Grounded(PUBTATOR if doc else NOT_YET, doc, req.key)
        return out


class _Progress:
    """A rich progress bar on stderr (papers/s, ETA), or nothing."""

    def __init__(self, enabled: bool, total: int | None) -> None:
        self.enabled = enabled
        self.total = total
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("indexing"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("index", total=self.total, rate="")
            self._started = time.perf_counter()
        return self

    def advance(self) -> None:
        if self._progress is not None:
            done = self._progress.tasks[0].completed + 1
            rate = done / max(time.perf_counter() - self._started, 1e-9)
            self._progress.update(self._task, advance=1, rate=f"{rate:.2f} papers/s")

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
