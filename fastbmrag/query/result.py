"""What a query returns (:class:`QueryResult`, its JSON the documented layout) and how it is
written for people: text and Markdown."""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from fastbmrag.fields import StoredEdge
from fastbmrag.papers.design import MODEL
from fastbmrag.papers.design import label as design_label
from fastbmrag.papers.model import without_controls
from fastbmrag.text.findings import BACKGROUND
from fastbmrag.util.wording import counted, said

Word = Callable[[str], str]  # how a door says an option's field: "--top-k", "'top_k'"


@dataclass
class EdgeResult:
    n: int
    id: str
    score: float | None
    weight: float | None
    payload: dict[str, Any]
    cited: bool = False
    # the rule that let it into the answer: "entity" (about an entity of the question or a
    # flag), "filter" (a flag's filter), "word" (shares a content word with the question)
    kept_by: str = "entity"

    @cached_property
    def edge(self) -> StoredEdge:
        """The stored edge, read by attribute."""
        return StoredEdge.of(self.payload)

    @property
    def statement(self) -> str:
        e = self.edge
        rel = str(e.relationship_type or "").replace("_", " ")
        return f"{e.source or '?'} {rel} {e.target or '?'}"

    def to_dict(self) -> dict[str, Any]:
        e = self.edge
        return {
            "n": self.n,
            "id": self.id,
            "score": self.score,
            "weight": self.weight,
            "cited": self.cited,
            "kept_by": self.kept_by,
            "source": e.source,
            "source_id": e.source_id or None,
            "relationship_type": e.relationship_type,
            "target": e.target,
            "target_id": e.target_id or None,
            "paper_id": e.paper_id,
            "payload": self.payload,
        }


REFERENCE_FIELDS = ("paper_id", "pmid", "pmcid", "doi", "title", "journal", "year")


@dataclass(eq=False)
class QueryResult(Mapping[str, Any]):
    """What a query returns: typed fields, and, read as a mapping (``result["answer"]``,
    ``dict(result)``), the documented JSON layout (:meth:`to_dict`; README, "Query"), which
    the page sends and ``--format json`` prints."""

    question: str
    collection: str
    answer: str | None
    references: list[dict[str, Any]]
    edges: list[EdgeResult]
    filters: dict[str, Any]
    parse: dict[str, Any]
    retrieval: dict[str, Any]
    timings: dict[str, float]
    llm: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    no_evidence: dict[str, Any] | None = None  # why nothing answers the question (answer None)
    understood: list[dict[str, Any]] = field(default_factory=list)  # the question's mentions
    uncited_sentences: list[str] = field(default_factory=list)
    consensus: list[dict[str, Any]] = field(default_factory=list)  # per entity pair retrieved
    follow_ups: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """The JSON layout, an option a note names said as its field (``no_answer``)."""
        why = self.no_evidence
        return {
            "question": self.question,
            "collection": self.collection,
            "answer": self.answer,
            "no_evidence": why and {**why, "reason": said(why["reason"])},
            "understood": self.understood,
            "uncited_sentences": self.uncited_sentences,
            "consensus": self.consensus,
            "follow_ups": self.follow_ups,
            "references": self.references,
            "edges": [e.to_dict() for e in self.edges],
            "filters": self.filters,
            "parse": self.parse,
            "retrieval": self.retrieval,
            "timings": self.timings,
            "llm": self.llm,
            "warnings": [said(w) for w in self.warnings],
        }

    @classmethod
    def from_dict(cls, layout: dict[str, Any]) -> QueryResult:
        """The result again from its JSON layout (:meth:`to_dict`)."""
        edges = [
            EdgeResult(e["n"], e.get("id", ""), e.get("score"), e.get("weight"), e["payload"],
                       e.get("cited", False), e.get("kept_by", "entity"))  # fmt: skip
            for e in layout.get("edges", [])
        ]
        known = {f.name for f in fields(cls)} - {"edges"}
        return cls(edges=edges, **{k: v for k, v in layout.items() if k in known})


def study_of(edge: StoredEdge) -> str:
    """A paper's design and organisms as a reference shows them: "RCT, humans"; a label the
    model judged is marked so."""
    source = MODEL if MODEL in (edge.design_from, edge.organisms_from) else ""
    return design_label(str(edge.design or ""), edge.organisms or [], source)


def _ref_line(ref: dict[str, Any]) -> str:
    ids = []
    if ref.get("pmid"):
        ids.append(f"PMID {ref['pmid']}")
    if ref.get("pmcid"):
        ids.append(str(ref["pmcid"]))
    if ref.get("doi"):
        ids.append(f"doi:{ref['doi']}")
    where = ", ".join(str(v) for v in (ref.get("journal"), ref.get("year")) if v)
    title = str(ref.get("title") or ref["paper_id"]).rstrip(".")  # joined with ". " below
    parts = [str(title)] + ([where] if where else []) + ([", ".join(ids)] if ids else [])
    study = f" [{ref['study']}]" if ref.get("study") else ""
    return ". ".join(parts) + study + (" [retracted]" if ref.get("retracted") else "")


def _html_escaped(text: str) -> str:
    return html.escape(text, quote=False)


def _score(edge: EdgeResult) -> str:
    return "  -  " if edge.score is None else f"{edge.score:.3f}"


def _no_evidence_lines(result: QueryResult, word: Word) -> list[str]:
    why = result.no_evidence
    if why is None:
        return []
    out = [f"No evidence: {said(why['reason'], word)}."]
    if why["closest"]:
        near = ", ".join(
            f"{c['name']} ({c['id'] or c['type']}, {counted(c['degree'], 'edge')})"
            for c in why["closest"]
        )
        out.append(f"Closest entities in the collection: {near}.")
    return out + [""]


def understood_line(result: QueryResult) -> str | None:
    """ "Understood: IL1B (HGNC:5992), Endometriosis (D004715, not in this collection)": what the
    question names, as understood, or None when it names nothing recognised."""
    if not result.understood:
        return None
    notes = {"absent": ", not in this collection", None: ", not used: entity flags given"}

    def note(u: dict[str, Any]) -> str:
        if u["used_as"] == "broader" and u.get("broader"):
            return f", not in this collection: answered from {u['broader']['name']}"
        return notes.get(u["used_as"], "")

    return "Understood: " + ", ".join(f"{u['name']} ({u['id']}{note(u)})" for u in result.understood)


def render_text(result: QueryResult, word: Word = str) -> str:
    """Readable text; an option a note names said as ``word(field)``."""
    # What the question names first; "No evidence"; then notes, before the answer they qualify
    line = understood_line(result)
    out: list[str] = [line, ""] if line else []
    out += _no_evidence_lines(result, word) + [f"Note: {said(w, word)}." for w in result.warnings]
    out += [""] if result.warnings else []
    if result.answer is not None:
        out += [result.answer, ""]
        if result.references:
            out.append("References:")
            for ref in result.references:
                nums = "".join(f"[{k}]" for k in ref["citations"])
                out.append(f"  {nums} {_ref_line(ref)}")
            out.append("")
        if result.follow_ups:
            out += ["Follow-up questions:", *(f"  - {q}" for q in result.follow_ups), ""]
    elif result.no_evidence is None:
        matched = result.filters["matched"]
        passed = "ranked by the question" if matched is None else f"{matched:,} passed the filters"
        out.append(f"{counted(len(result.edges), 'edge')} ({passed}):")
        for e in result.edges:
            edge = e.edge
            study = study_of(edge)
            out.append(
                f"  [{e.n}] {_score(e)}  {e.statement}  "
                f"({edge.paper_id}{', ' + str(edge.year) if edge.year else ''}"
                f"{'; ' + study if study else ''})"
                + (" [background: cited as known]" if edge.finding == BACKGROUND else "")
            )
            if edge.description:
                out.append(f"        {' '.join(str(edge.description).split())[:200]}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_markdown(result: QueryResult, word: Word = str) -> str:
    """Markdown, its text HTML-escaped (a paper's title, a journal, the model's answer may hold
    markup that a Markdown viewer would render: escaped, as the page does)."""
    md = _html_escaped
    line = understood_line(result)
    out = [f"## {md(result.question)}", "", *([md(line), ""] if line else [])]
    out += [md(x) for x in _no_evidence_lines(result, word)]
    out += [f"> Note: {md(said(w, word))}." for w in result.warnings]
    out += [""] if result.warnings else []
    if result.answer is not None:
        out += [md(result.answer), ""]
        if result.references:
            out += ["### References", ""]
            for ref in result.references:
                nums = ", ".join(str(k) for k in ref["citations"])
                out.append(f"- [{nums}] {md(_ref_line(ref))}")
            out.append("")
    out += ["### Evidence", "", "| n | score | relation | paper | year | design |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for e in result.edges:
        edge = e.edge
        statement = md(e.statement).replace("|", "\\|")
        paper = md(str(edge.paper_id)).replace("|", "\\|")
        out.append(
            f"| {e.n} | {_score(e).strip()} | {statement} | {paper} | {edge.year or ''} "
            f"| {study_of(edge)} |"
        )
    out.append("")
    return "\n".join(out).rstrip() + "\n"


def render(result: QueryResult | dict[str, Any], fmt: str, word: Word = str) -> str:
    """``result`` (or its JSON layout, as :meth:`fastbmrag.RAG.query` returns it) as ``fmt``:
    text, markdown or json. ``word``: how an option a note names is said (the command line's
    flag); JSON names the field, at every door."""
    if isinstance(result, dict):
        result = QueryResult.from_dict(result)
    if fmt == "json":
        import json

        return json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str) + "\n"
    # a control character a stored field still holds (an escape sequence a terminal would obey)
    # is no text: read papers lose theirs, older collections may keep them
    if fmt == "markdown":
        return without_controls(render_markdown(result, word))
    return without_controls(render_text(result, word))
