"""What a query can be told: :class:`QueryOptions`, every option of `fastbmrag query`, the API
and the web page, with its default and its check, declared once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fastbmrag import config
from fastbmrag.declared import check, option, values_of
from fastbmrag.errors import InputError
from fastbmrag.papers.design import DESIGNS, ORGANISMS, named_design, named_organism
from fastbmrag.prompts import RELATIONSHIP_TYPES
from fastbmrag.query.filters import PAYLOAD_FILTERS
from fastbmrag.util.wording import option_named

ANSWER_BATCH = 50  # evidence items per answer call; more are map-reduced
MATCH_MODES = ("all", "any")
RANKS = ("score", "design")
FORMATS = ("text", "json", "markdown")


def _named(
    values: tuple[str, ...], named: Any, known: dict[str, str], what: str
) -> tuple[str, ...]:
    """Comma-separated values as their keys ("RCT, meta-analysis" -> rct, meta-analysis)."""
    out: list[str] = []
    for value in (v for given in values for v in str(given).split(",") if v.strip()):
        key = named(value)
        if not key:
            raise InputError(f"Unknown {what} {value.strip()!r}: use one of {', '.join(known)}")
        out.append(key)
    return tuple(dict.fromkeys(out))


def study_filter(designs: Any, organisms: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The study designs and organisms a query, a path, a card or the contradictions are told,
    as their keys (a list, or one comma-separated text: "RCT, meta-analysis"); an empty or
    unknown one is an InputError naming the field."""
    out = []
    for name, given, named, known, what in (
        ("designs", designs, named_design, DESIGNS, "design"),
        ("organisms", organisms, named_organism, ORGANISMS, "organism"),
    ):
        values = values_of(given, name)
        if any(not v.strip() for v in values):
            raise InputError(
                f"{option_named(name)} holds an empty value: pass a value or leave it out",
                field=name,
            )
        out.append(_named(values, named, known, what))
    return out[0], out[1]


def findings_only_option() -> Any:
    """``findings_only``, declared once for every operation that reads edges (a query, the
    graph commands, the digest)."""
    return option(
        False, flag="--findings-only",
        help="Only the papers' own findings: leave out what a paper restates as known before "
        "(background).",
    )  # fmt: skip


def with_filters(cls: type) -> type:
    """``cls`` with the payload filters (:data:`PAYLOAD_FILTERS`) as declared options, where
    it says ``FILTERS``: a list of texts (``any``, ``either``) or a year (a range's bound)."""
    hints: dict[str, Any] = {}
    for name, hint in cls.__annotations__.items():
        if name != "FILTERS":
            hints[name] = hint
            continue
        for f in PAYLOAD_FILTERS:
            hints[f.name] = "tuple[str, ...]" if f.multiple else "int | None"
            setattr(cls, f.name, option(
                () if f.multiple else None, flag=f.flags[-1], short=f.flags[0] * (len(f.flags) > 1),
                choices=f.choices, low=f.low, high=f.high, whole=not f.multiple, plain=True,
                kind="a year" * (not f.multiple), note="(e.g. 2015)" * (not f.multiple),
                label=f.title, help=f.help,
            ))  # fmt: skip
    cls.__annotations__ = hints
    return cls


@dataclass
@with_filters
class QueryOptions:
    """Everything a query can be told. Filter fields given here override the question's parse.
    Each option is declared once (:func:`fastbmrag.declared.option`); the payload filters are
    declared in :data:`PAYLOAD_FILTERS`."""

    top_k: int = option(
        config.DEFAULT_QUERY_TOP_K, flag="--top-k", low=1, high=config.MAX_TOP_K, whole=True,
        note="(all: every edge)", help="Edges to retrieve (--all: every one).",
    )  # fmt: skip
    all: bool = option(
        False, flag="--all", label="Every edge",
        help="Every edge that passes the filters and --min-score.",
    )
    min_score: float | None = option(
        config.DEFAULT_MIN_SCORE, flag="--min-score", low=-1, high=1,
        kind="a cosine similarity",
        help="Cosine similarity an edge needs to be retrieved; --min-score -1 keeps all.",
    )  # fmt: skip
    no_answer: bool = option(
        False, flag="--no-answer", label="Evidence only (no answer)",
        help="Only the retrieved edges: zero chat calls.",
    )  # fmt: skip
    no_llm_parse: bool = option(
        False, flag="--no-llm-parse", label="Skip the model's parse",
        help="Skip the chat call that picks relation and answer types.",
    )  # fmt: skip
    link: bool = option(
        True, flag="--no-link", negate=True, label="Link the question's names",
        help="Do not link genes/diseases/chemicals in the question.",
    )  # fmt: skip
    match: str = option(
        "all", flag="--match", choices=MATCH_MODES,
        help="Two entities: an edge joins both (all) or touches either (any).",
    )  # fmt: skip
    entities: tuple[str, ...] = option(
        (), flag="--entity", short="-e",
        help="Entity name or id (HGNC:5992, D004715) on either end of an edge; repeatable. "
        "Replaces the question's entities.",
    )  # fmt: skip
    sources: tuple[str, ...] = option(
        (), flag="--source", help="Entity name or id at the source end."
    )
    targets: tuple[str, ...] = option(
        (), flag="--target", help="Entity name or id at the target end."
    )
    # here: the payload filters, declared with their edge fields (PAYLOAD_FILTERS)
    FILTERS: ClassVar[None]
    min_weight: float | None = option(
        None, flag="--min-weight", low=0, high=1,
        help="Edge weight at least this, applied inside Qdrant.",
    )  # fmt: skip
    exact: bool = option(
        False, flag="--exact", label="Exact entities",
        help="An entity filter matches the entity itself, not the MeSH concepts below it or "
        "the genes of a gene group.",
    )  # fmt: skip
    fallback: bool = option(
        True, flag="--no-fallback", negate=True, label="Relax what matches nothing",
        help="Do not relax the join of two question entities or the parsed relation/answer "
        "types.",
    )  # fmt: skip
    rank: str = option(
        "score", flag="--rank", choices=RANKS,
        help="Order of the evidence: by similarity, or by study design (meta-analyses and "
        "RCTs first), similarity within each.",
    )  # fmt: skip
    include_retracted: bool = option(
        False, flag="--include-retracted", label="Include retracted papers",
        help="Keep the edges of retracted papers (left out by default), marked [retracted].",
    )  # fmt: skip
    findings_only: bool = findings_only_option()
    answer_model: str | None = option(
        None, flag="--answer-model", env=config.ENV_ANSWER_MODEL, page=False,
        help=f"Chat model for the parse and the answer [env {config.ENV_ANSWER_MODEL}, "
        "default --llm-model].",
    )  # fmt: skip
    answer_batch: int = option(
        ANSWER_BATCH, low=1, whole=True, cli=False, page=False,
        help="Evidence items per answer call; more are map-reduced.",
    )  # fmt: skip
    concurrency: int = option(
        config.DEFAULT_CONCURRENCY, low=1, whole=True, cli=False, page=False,
        help="Answer calls in flight (map-reduce).",
    )  # fmt: skip

    def filtered(self, name: str) -> Any:
        """The value of the payload filter ``name`` (:data:`PAYLOAD_FILTERS`): () or None where
        none is given."""
        return vars(self)[name]

    def __post_init__(self) -> None:
        multiple = [f.name for f in PAYLOAD_FILTERS if f.multiple]
        for name in ("entities", "sources", "targets", *multiple):
            setattr(self, name, values_of(getattr(self, name), name))
        for f in PAYLOAD_FILTERS:
            if f.multiple and any(not str(v).strip() for v in getattr(self, f.name)):
                raise InputError(
                    f"{option_named(f.name)} holds an empty value: pass a value or leave it out",
                    field=f.name,
                )
        given = vars(self)  # the filters are declared with their edge fields: read by name
        given["entity_types"] = tuple(t.lower() for t in given["entity_types"])
        given["relationship_types"] = tuple(
            r.lower().replace("-", "_").replace(" ", "_") for r in given["relationship_types"]
        )
        _check_filters(given)
        check(self)  # the years among the declared ranges
        since, until = given["since"], given["until"]
        if since is not None and until is not None and since > until:
            raise InputError(
                f"{option_named('since')} {since} is after the {option_named('until')} year "
                f"{until}: swap them",
                field="since",
            )
        given["designs"], given["organisms"] = study_filter(given["designs"], given["organisms"])


@dataclass
class AskOptions(QueryOptions):
    """What a question is told: the question itself, then :class:`QueryOptions` (the command
    line's argument and flags and the page's request are these fields)."""

    question: str = option(
        kw_only=True, argument=True, kind="text (a question in plain words)",
        help="The question, in plain words.",
    )  # fmt: skip


def _check_filters(given: dict[str, Any]) -> None:
    """The payload filters' values, in the words of each: a PMID, a relationship type (an
    entity type is among its declared choices)."""
    bad_pmid = next((p for p in given["pmids"] if not p.strip().isdigit()), None)
    if bad_pmid is not None:
        raise InputError(
            f"{option_named('pmids')}: {bad_pmid!r} is no PubMed id (digits only: 24111943)",
            field="pmids",
        )
    bad = [r for r in given["relationship_types"] if r not in RELATIONSHIP_TYPES]
    if bad:
        raise InputError(
            f"Unknown relationship type '{bad[0]}': use one of {', '.join(RELATIONSHIP_TYPES)}"
        )
