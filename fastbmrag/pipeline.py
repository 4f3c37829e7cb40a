"""The indexer: papers -> draft -> normalise -> refine -> embed -> one commit per paper.

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

import asyncio
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from fastbmrag import config
from fastbmrag.errors import EXIT_OK, EXIT_PARTIAL, LLMError, LLMUnavailable, ModelNotFound
from fastbmrag.extract import Relation, draft_relations, resolve_draft
from fastbmrag.llm.base import ChatResult, LLMClient
from fastbmrag.papers.model import Paper
from fastbmrag.prompts import relation_statement
from fastbmrag.refine import (
    CHUNK_CHARS,
    CHUNK_OVERLAP,
    MIN_SIMILARITY,
    TOP_K,
    refine_query,
    refine_relations,
)
from fastbmrag.sentences import Sentence, abstract_sentences, opening_sentences
from fastbmrag.store.base import EdgeRef, Point, edge_point_id, node_key
from fastbmrag.store.collection import Collection, PaperEdges
from fastbmrag.store.payload import CITED, REFINED, EdgePayload
from fastbmrag.vocab.base import Normalized, Normalizer

log = logging.getLogger(__name__)


@dataclass
class UpdateOptions:
    force: bool = False  # re-index papers that are done and unchanged
    dry_run: bool = False  # say what would happen, no LLM call, no write
    refine: bool = True  # stage 2 for papers with main text
    # Papers in flight: the model requests in flight (--concurrency), so that every request
    # slot has a paper to work on; the LLM client bounds the requests themselves.
    concurrency: int = config.DEFAULT_CONCURRENCY
    chunk_chars: int = CHUNK_CHARS
    chunk_overlap: int = CHUNK_OVERLAP
    top_k: int = TOP_K
    min_similarity: float = MIN_SIMILARITY
    refresh_every: int = 200  # committed papers between weight refreshes
    commit_every: int = 32  # finished papers per store flush + ledger transaction
    commit_seconds: float = 5.0  # ... or fewer, when this long has passed since the last
    num_predict: int | None = None  # completion cap of the draft and refine calls (else theirs)


@dataclass
class PaperOutcome:
    paper_id: str
    status: str  # "done" | "failed" | "unchanged" | "would_index"
    edges: int = 0
    error: str | None = None
    chat_calls: int = 0
    embed_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refined: int = 0
    dropped: int = 0  # drafted relations that did not validate or cited no valid sentence
    uncited: int = 0  # refined descriptions that cited no listed sentence (the cited one stays)
    from_main_text: bool = False  # no abstract: drafted from the opening of the main text
    self_loops: int = 0  # drafted relations whose two ends normalised to one entity (dropped)


# Paper.metadata() keys that are declared EdgePayload fields; the rest travel as its ``extra``.
PAPER_FIELDS = (
    "paper_id",
    "pmid",
    "pmcid",
    "doi",
    "title",
    "journal",
    "year",
    "authors",
    "paper_weight",
)


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
    wall_seconds: float = 0.0
    dry_run: bool = False
    would_index: dict[str, int] = field(default_factory=dict)  # dry run: reason -> papers
    failures: list[tuple[str, str]] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)
    max_chat_calls_per_paper: int = 0
    max_embed_requests_per_paper: int = 0
    servers: dict[str, dict[str, int]] = field(default_factory=dict)  # several: per server
    stopped: str | None = None  # why the run ended early (interrupted, the server gone ...)

    @property
    def exit_code(self) -> int:
        return EXIT_PARTIAL if self.failed else EXIT_OK

    def tokens_per_paper(self) -> tuple[float, float]:
        n = max(self.indexed + self.failed, 1)
        prompt = sum(u.get("prompt_tokens", 0) for u in self.llm.values())
        completion = sum(u.get("completion_tokens", 0) for u in self.llm.values())
        return prompt / n, completion / n

    def line(self) -> str:
        if self.dry_run:
            todo = (
                ", ".join(f"{n} {why}" for why, n in sorted(self.would_index.items())) or "nothing"
            )
            return (
                f"dry run: {self.read:,} papers read; would index "
                f"{sum(self.would_index.values()):,} ({todo}); {self.unchanged:,} unchanged"
            )
        calls = {k: v.get("calls", 0) for k, v in self.llm.items()}
        calls_txt = ", ".join(f"{k} {n:,}" for k, n in calls.items() if n) or "none"
        p, c = self.tokens_per_paper()
        stopped = f"stopped early ({self.stopped}): " if self.stopped else ""
        return (
            f"{stopped}{self.read:,} papers read: {self.indexed:,} indexed, {self.unchanged:,} unchanged, "
            f"{self.failed:,} failed; {self.edges:,} edges ({self.refined_edges:,} refined"
            f"{self._drops()}); LLM calls: {calls_txt}; tokens/paper: {p:,.0f} prompt + "
            f"{c:,.0f} completion{self._servers()}; {self.wall_seconds:.1f} s"
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
        out = ""
        if self.drafted_from_main_text:
            out += f"; {self.drafted_from_main_text:,} papers without an abstract drafted from main text"
        if self.dropped_relations:
            out += f"; {self.dropped_relations:,} drafted relations dropped (invalid or uncited)"
        if self.self_loops:
            out += f"; {self.self_loops:,} self-loops after normalisation dropped"
        if self.uncited_refinements:
            out += f"; {self.uncited_refinements:,} refinements without a valid citation not used"
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["line"] = self.line()
        d["exit_code"] = self.exit_code
        p, c = self.tokens_per_paper()
        d["prompt_tokens_per_paper"] = round(p, 1)
        d["completion_tokens_per_paper"] = round(c, 1)
        return d


# --- per-paper work --------------------------------------------------------------------------------


@dataclass
class _Entity:
    norm: Normalized
    type: str

    @property
    def key(self) -> str:
        return node_key(self.norm.ontology_id, self.type, self.norm.normalized_name)


def _entities(normalizer: Normalizer, name: str, etype: str, context: str) -> list[_Entity]:
    """The entities a name stands for: one, or one per part of a coordination ("SMAD2/3",
    "breast and ovarian cancer")."""
    norm = normalizer.normalize(name, etype, context)
    return [_Entity(part, etype) for part in norm.parts] or [_Entity(norm, etype)]


def build_edges(
    paper: Paper,
    relations: list[Relation],
    normalizer: Normalizer,
    drafted: list[Sentence] | None = None,
) -> tuple[list[tuple[Relation, _Entity, _Entity]], int]:
    """Normalise both ends (a coordination gives one edge per gene it names); one edge per
    (source, type, target) in a paper. The context is the title and abstract, or the
    ``drafted`` sentences of a paper without an abstract. Returns the edges and the number of
    relations dropped because both their ends became one entity ("HIF1" -> "HIF1A")."""
    context = f"{paper.title}\n{paper.abstract}"
    if drafted and not paper.abstract.strip():
        context = "\n".join(s.text for s in drafted)
    seen: set[tuple[str, str, str]] = set()
    out = []
    self_loops = 0
    for rel in relations:
        pairs = [
            (src, tgt)
            for src in _entities(normalizer, rel.src, rel.src_type, context)
            for tgt in _entities(normalizer, rel.tgt, rel.tgt_type, context)
        ]
        if all(src.key == tgt.key for src, tgt in pairs):
            self_loops += 1
            continue
        for src, tgt in pairs:
            triple = (src.key, rel.rel, tgt.key)
            if src.key == tgt.key or triple in seen:
                continue
            seen.add(triple)
            out.append((rel, src, tgt))
    return out, self_loops


_DOCS_LINK = re.compile(r"\s*For further information visit https?://\S+")


def one_line(error: str) -> str:
    """A paper's error as one line for the summary and the ledger: no line breaks, no links to
    a library's documentation (pydantic's)."""
    return " ".join(_DOCS_LINK.sub("", error).split())


def _as_written(raw: str, norm: Normalized) -> str:
    """A relation end as the paper writes it, with its normalised name where that differs."""
    if norm.normalized_name.casefold() == raw.casefold():
        return raw
    return f"{raw} ({norm.normalized_name})"


def _add_chat(out: PaperOutcome, chat: ChatResult[Any]) -> None:
    out.chat_calls += chat.calls
    out.prompt_tokens += chat.prompt_tokens
    out.completion_tokens += chat.completion_tokens


async def index_paper(
    paper: Paper,
    llm: LLMClient,
    normalizer: Normalizer,
    opts: UpdateOptions,
) -> tuple[PaperOutcome, list[Point], list[EdgeRef]]:
    """All LLM work for one paper; returns the points to commit (nothing is written here).

    The model points, the program quotes: a relation's description is its cited abstract
    sentences unless stage 2 refines it, and its evidence is always sentences cut from the
    paper with their place (title, abstract or passage n) and offsets.
    """
    out = PaperOutcome(paper.paper_id, "failed")
    sentences = abstract_sentences(paper.title, paper.abstract)
    if not paper.abstract.strip() and paper.has_main_text:
        sentences += opening_sentences(paper.paragraphs)
        out.from_main_text = True
    cap = {"num_predict": opts.num_predict} if opts.num_predict else None
    draft = await draft_relations(sentences, llm, options=cap)
    _add_chat(out, draft)
    if draft.value is None:
        out.error = f"draft: {draft.error}"
        return out, [], []

    relations, out.dropped = resolve_draft(draft.value, sentences)
    edges, out.self_loops = build_edges(paper, relations, normalizer, sentences)
    if not edges:
        out.status = "done"
        return out, [], []

    statements = [
        relation_statement(s.norm.normalized_name, r.rel, t.norm.normalized_name)
        for r, s, t in edges
    ]
    descriptions = {i: r.cited_text for i, (r, _, _) in enumerate(edges)}
    evidence = {i: list(r.cited) for i, (r, _, _) in enumerate(edges)}
    refined: set[int] = set()

    if opts.refine and paper.has_main_text:
        # Stage 2 reads the passages, so it sees each relation named as the paper writes it
        # ("IL-8 (CXCL8) upregulated in Endometriosis"), the normalised name only where it differs.
        written = [
            relation_statement(_as_written(r.src, s.norm), r.rel, _as_written(r.tgt, t.norm))
            for r, s, t in edges
        ]
        ref = await refine_relations(
            paper.title,
            paper.paragraphs,
            [refine_query(st, descriptions[i]) for i, st in enumerate(written)],
            llm,
            chunk_chars=opts.chunk_chars,
            chunk_overlap=opts.chunk_overlap,
            top_k=opts.top_k,
            min_similarity=opts.min_similarity,
            options=cap,
        )
        out.embed_requests += ref.embed_requests
        if ref.chat is not None:
            _add_chat(out, ref.chat)
        if ref.error:
            out.error = f"refine: {ref.error}"
            return out, [], []
        out.uncited = ref.uncited
        descriptions.update(ref.descriptions)
        evidence.update(ref.evidence)
        refined = set(ref.descriptions)

    vectors = await llm.embed([f"{st}. {descriptions[i]}" for i, st in enumerate(statements)])
    out.embed_requests += 1

    meta = paper.metadata()
    known = {k: meta.pop(k) for k in PAPER_FIELDS}
    above = normalizer.ancestors
    points: list[Point] = []
    refs: list[EdgeRef] = []
    for i, (rel, src, tgt) in enumerate(edges):
        payload = EdgePayload(
            **known,
            source=src.norm.normalized_name,
            source_id=src.norm.ontology_id or "",
            source_key=src.key,
            source_type=src.type,
            source_ancestors=list(above(src.norm.ontology_id)) if src.norm.ontology_id else [],
            source_raw=rel.src,
            source_match=src.norm.matched_by,
            target=tgt.norm.normalized_name,
            target_id=tgt.norm.ontology_id or "",
            target_key=tgt.key,
            target_type=tgt.type,
            target_ancestors=list(above(tgt.norm.ontology_id)) if tgt.norm.ontology_id else [],
            target_raw=rel.tgt,
            target_match=tgt.norm.matched_by,
            relationship_type=rel.rel,
            description=descriptions[i],
            description_source=REFINED if i in refined else CITED,
            evidence=[s.to_dict() for s in evidence[i]],
            extra=meta,
        )
        points.append(
            Point(
                edge_point_id(paper.paper_id, src.key, rel.rel, tgt.key),
                vectors[i],
                payload.to_dict(),
            )
        )
        refs.append(
            EdgeRef(
                source_key=src.key,
                source_name=src.norm.normalized_name,
                source_type=src.type,
                source_id=src.norm.ontology_id,
                relationship_type=rel.rel,
                target_key=tgt.key,
                target_name=tgt.norm.normalized_name,
                target_type=tgt.type,
                target_id=tgt.norm.ontology_id,
            )
        )
    out.status = "done"
    out.edges = len(points)
    out.refined = len(refined)
    return out, points, refs


# --- the run ---------------------------------------------------------------------------------------


def _classify(paper: Paper, collection: Collection | None, force: bool) -> tuple[str, str]:
    """(reason to index or "unchanged", content hash); no collection yet -> every paper is new."""
    digest = paper.content_hash()
    state = collection.paper_state(paper.paper_id) if collection is not None else None
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
) -> RunSummary:
    """Index ``papers`` into ``collection``. Runs its own event loop and closes ``llm`` at the end.

    Before the first paper that needs work is touched, the model server and models are
    checked (``preflight``) and the embedding size is checked against the collection; both
    raise with a one-line fix. A run with nothing to do contacts no server.
    """
    opts = options or UpdateOptions()
    return asyncio.run(_run(papers, collection, llm, normalizer, opts, progress, total))


async def _run(
    papers: Iterable[Paper],
    collection: Collection | None,
    llm: LLMClient,
    normalizer: Normalizer,
    opts: UpdateOptions,
    progress: bool,
    total: int | None,
) -> RunSummary:
    summary = RunSummary(dry_run=opts.dry_run)
    started = time.perf_counter()
    try:
        if opts.dry_run:
            for paper in papers:
                summary.read += 1
                why, _ = _classify(paper, collection, opts.force)
                if why == "unchanged":
                    summary.unchanged += 1
                else:
                    summary.would_index[why] = summary.would_index.get(why, 0) + 1
            return summary

        if collection is None:
            raise ValueError("index_papers needs a collection unless dry_run is set")
        run_id = collection.record_run_start("update", {"options": asdict(opts)})
        try:
            with _Progress(progress, total) as bar:
                await _work(papers, collection, llm, normalizer, opts, summary, bar)
            collection.refresh_weights()
            collection.optimize()
        except BaseException as err:  # the run ends here: say why in the ledger, then raise
            summary.stopped = (
                "interrupted" if isinstance(err, KeyboardInterrupt | asyncio.CancelledError)
                else str(err) or type(err).__name__
            )  # fmt: skip
            raise
        finally:
            _account(summary, llm, started)
            collection.record_run_end(run_id, summary.to_dict())
        return summary
    finally:
        _account(summary, llm, started)
        await llm.aclose()


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
) -> None:
    queue: asyncio.Queue[tuple[Paper, str] | None] = asyncio.Queue(maxsize=opts.concurrency * 2)
    group: list[PaperEdges] = []  # finished papers waiting for their (shared) commit
    last_commit = time.monotonic()
    since_refresh = 0

    def commit() -> None:
        # One store flush and one ledger transaction for the group: a crash before it loses
        # only these papers' writes (they stay pending), and their LLM answers are cached.
        nonlocal last_commit, since_refresh
        if group:
            collection.commit_papers(group)
            since_refresh += len(group)
            group.clear()
        last_commit = time.monotonic()
        if since_refresh >= opts.refresh_every:
            since_refresh = 0
            collection.refresh_weights()

    async def worker() -> None:
        while (item := await queue.get()) is not None:
            paper, digest = item
            try:
                outcome, points, refs = await index_paper(paper, llm, normalizer, opts)
            except (LLMUnavailable, ModelNotFound):
                raise  # the server is gone: stop the run (finished papers are committed)
            except LLMError as err:  # this paper's embeddings failed after their retries
                outcome, points, refs = (
                    PaperOutcome(paper.paper_id, "failed", error=str(err)),
                    [],
                    [],
                )
            if outcome.status == "done":
                group.append(PaperEdges(paper.paper_id, digest, points, refs))
                summary.indexed += 1
                summary.edges += outcome.edges
                summary.refined_edges += outcome.refined
                summary.dropped_relations += outcome.dropped
                summary.uncited_refinements += outcome.uncited
                summary.drafted_from_main_text += outcome.from_main_text
                summary.self_loops += outcome.self_loops
                if (
                    len(group) >= opts.commit_every
                    or time.monotonic() - last_commit >= opts.commit_seconds
                ):
                    commit()
            else:
                error = one_line(outcome.error or "unknown error")
                collection.mark_failed(paper.paper_id, digest, error)
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

    async def produce(tg: asyncio.TaskGroup) -> None:
        started = False
        for paper in papers:
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
            await queue.put((paper, digest))
        if started:
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
