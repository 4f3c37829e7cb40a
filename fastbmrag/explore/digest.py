"""What changed since a run: the papers a collection gained, lost or saw retracted, the edges
the runs added (grouped by entity, watched ones first), the pairs whose papers newly disagree or
newly agree, and the entities new to it. Read from the ledger's dated edges and paper events,
and from the store for titles and evidence; no model call.

``since``: ``last`` (the last run), a run number (that run and the later ones; 0: everything,
the edges of a collection indexed before runs were recorded included), or a date
(``YYYY-MM-DD``: the runs started that day or later).
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from fastbmrag.errors import InputError
from fastbmrag.fields import StoredEdge
from fastbmrag.graph.consensus import consensus
from fastbmrag.graph.edges import node_names
from fastbmrag.query.result import study_of
from fastbmrag.store.base import Filter, HasId, Match
from fastbmrag.store.payload import evidence_of
from fastbmrag.text.findings import BACKGROUND
from fastbmrag.util.wording import counted, option_named

if TYPE_CHECKING:
    from fastbmrag.store.collection import Collection

FORMATS = ("text", "markdown", "json", "html")
LAST = "last"  # a digest of the last run (the default of since)
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def first_run(collection: Collection, since: str) -> int | None:
    """The first run a digest ``since`` covers; None when there is none (nothing to say)."""
    since = since.strip().lower()
    ledger = collection.ledger
    if since == LAST:
        last = ledger.runs.last()
        return None if last is None else last.run_id
    if since.isascii() and since.isdigit() and len(since) <= 18:
        last = ledger.runs.last()
        if last is None or int(since) > last.run_id:
            raise InputError(
                f"{option_named('since')} {since} is no run of collection '{collection.name}' "
                f"yet: {'it has none' if last is None else f'the last is {last.run_id}'}",
                field="since",
            )
        return int(since)
    if _DATE.match(since):
        try:
            day = date.fromisoformat(since)
        except ValueError:
            raise InputError(
                f"{option_named('since')} {since!r} is no date: give one as 2026-11-01",
                field="since",
            ) from None
        if day > date.today():
            raise InputError(
                f"{option_named('since')} {since} is after today: give a day that has been",
                field="since",
            )
        return ledger.runs.first_since(since)
    raise InputError(
        f"{option_named('since')} {since!r} is no run: give 'last', a run number (status shows "
        "the last one) or a date (2026-11-01)",
        field="since",
    )


def digest(
    collection: Collection, since: str = LAST, *, findings_only: bool = False
) -> dict[str, Any]:
    """What the runs since ``since`` changed (module docstring); ``nothing`` when it is nothing.
    ``findings_only``: the edges a paper restates as known left out."""
    start = first_run(collection, since)
    ledger = collection.ledger
    runs = [] if start is None else ledger.runs.since(start)
    out: dict[str, Any] = {
        "collection": collection.name,
        "since": since,
        "runs": [
            {"run_id": r.run_id, "command": r.command, "started_at": r.started_at,
             "ended_at": r.ended_at, "stopped": (r.summary or {}).get("stopped")}
            for r in runs
        ],  # fmt: skip
        "papers": [],
        "reindexed": [],
        "removed": [],
        "retracted": [],
        "entities": [],
        "new_entities": [],
    }
    if start is None:
        out["nothing"] = True
        return out
    events = ledger.runs.events(start)
    retracted = ledger.retracted()
    rows = [r for r in ledger.dated_edge_rows() if not (findings_only and r[6] == BACKGROUND)]
    new = [r for r in rows if r[5] >= start]
    retracted_now = {pid for _, pid, event, _ in events if event == "retracted"}
    out_of_answers = [r for r in rows if r[1] in retracted_now]
    payloads = _payloads(collection, [r[0] for r in new + out_of_answers])
    names = node_names(collection)
    papers = _paper_meta(collection, {pid for _, pid, _, _ in events}, payloads)

    for _, pid, event, n in events:
        item = {"paper_id": pid, **papers.get(pid, {}), "edges": n}
        if event == "retracted":
            item["edges_out"] = [_edge(r, payloads, names) for r in out_of_answers if r[1] == pid]
        key = {"indexed": "papers"}.get(event, event)
        out[key].append(item)

    watched = ledger.watches.all()
    before_keys = {k for r in rows if r[5] < start for k in (r[2], r[4])}
    per_key = Counter(k for r in new for k in (r[2], r[4]))
    # each edge, and each changed pair, once: under its watched end, else its busier end
    def home(source: str, target: str) -> str:
        for key in (source, target):
            if key in watched:
                return key
        return source if per_key[source] >= per_key[target] else target

    grouped: dict[str, dict[str, list[Any]]] = defaultdict(
        lambda: {"edges": [], "cited": [], "changes": []}
    )
    for r in new:  # new findings; what a paper restates as known, apart (text.findings)
        if r[1] not in retracted:
            kind = "cited" if r[6] == BACKGROUND else "edges"
            grouped[home(r[2], r[4])][kind].append(_edge(r, payloads, names))
    changes = _consensus_changes(rows, new, start, retracted, names)
    points = [c.pop("points") for c in changes]
    stated = _payloads(collection, [pt for pair in points for pt, _, _ in pair])
    for change, pair_points in zip(changes, points, strict=True):
        change["sides"] = [
            {"paper_id": pid, "relationship_type": rel, "title": stated.get(pt, {}).get("title"),
             "evidence": (evidence_of(stated.get(pt, {})) or [{"text": ""}])[0]["text"]}
            for pt, pid, rel in pair_points
        ]  # fmt: skip
        grouped[home(change["source"], change["target"])]["changes"].append(change)
    for key in watched:
        grouped.setdefault(key, {"edges": [], "cited": [], "changes": []})
    order = sorted(grouped, key=lambda k: (k not in watched, -per_key[k], _name(k, names)))
    for key in order:
        node = names.get(key, {})
        out["entities"].append(
            {"key": key, "name": node.get("name") or watched.get(key) or key,
             "type": node.get("type", ""), "id": node.get("id"), "watched": key in watched,
             "new_to_collection": key in per_key and key not in before_keys,
             **grouped[key]}
        )  # fmt: skip
    out["new_entities"] = sorted(
        (_name(k, names) for k in per_key if k not in before_keys), key=str.lower
    )
    out["nothing"] = not (
        events or new or any(e["changes"] for e in out["entities"])
    )
    return out


def _side(change: dict[str, Any], rel: str) -> str:
    """One side of a changed pair: the papers that found it, then those that cite it as known
    ("risk_factor_for: f2, f3 (cited as known)"), never an empty side."""
    found = ", ".join(change["relations"][rel])
    cited = ", ".join(change["cited"].get(rel, []))
    said = ", ".join(x for x in (found, cited and f"{cited} (cited as known)") if x)
    return f"{rel}: {said}"


def _name(key: str, names: dict[str, dict[str, Any]]) -> str:
    return str(names.get(key, {}).get("name") or key)


def _payloads(collection: Collection, point_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    ids = list(dict.fromkeys(point_ids))
    for i in range(0, len(ids), 1000):
        for hit in collection.scroll(Filter(must=(HasId(tuple(ids[i : i + 1000])),))):
            found[str(hit.id)] = hit.payload
    return found


def _paper_meta(
    collection: Collection, paper_ids: set[str], payloads: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Title, journal and year of each paper, from one of its stored edges."""
    def about(p: dict[str, Any]) -> dict[str, Any]:
        return {**{k: p.get(k) for k in ("title", "journal", "year", "pmid")},
                "study": study_of(StoredEdge.of(p))}  # fmt: skip

    meta: dict[str, dict[str, Any]] = {}
    for p in payloads.values():
        pid = str(p.get("paper_id"))
        if pid in paper_ids and pid not in meta:
            meta[pid] = about(p)
    missing = tuple(sorted(paper_ids - meta.keys()))
    for i in range(0, len(missing), 500):
        for hit in collection.scroll(Filter(must=(Match("paper_id", any_of=missing[i:i + 500]),))):
            meta.setdefault(str(hit.payload.get("paper_id")), about(hit.payload))
    return meta


def _edge(
    row: tuple[str, str, str, str, str, int, str],
    payloads: dict[str, dict[str, Any]],
    names: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    point_id, pid, source, rel, target, *_ = row
    p = payloads.get(point_id, {})
    cited = evidence_of(p)
    return {
        "source": source, "source_name": p.get("source") or _name(source, names),
        "relationship_type": rel,
        "target": target, "target_name": p.get("target") or _name(target, names),
        "paper_id": pid, "title": p.get("title"), "year": p.get("year"),
        "evidence": cited[0]["text"] if cited else p.get("description", ""),
    }  # fmt: skip


def _consensus_changes(
    rows: list[tuple[str, str, str, str, str, int, str]],
    new: list[tuple[str, str, str, str, str, int, str]],
    start: int,
    retracted: set[str],
    names: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    """The pairs the new edges touch whose papers newly disagree (opposite relationship types)
    or newly agree (a second paper finds what one paper found)."""
    touched = {(r[2], r[4]) for r in new if r[1] not in retracted}
    now_rows = [r for r in rows if (r[2], r[4]) in touched and r[1] not in retracted]
    then = {(c["source"], c["target"]): c for c in consensus(
        (r[2], r[3], r[4], r[1], r[6] == BACKGROUND) for r in now_rows if r[5] < start)}  # fmt: skip
    on_pair: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
    for r in now_rows:  # each paper's edge on the pair: its evidence, side by side
        on_pair[(r[2], r[4])].append((r[0], r[1], r[3]))
    changes = []
    for pair in consensus((r[2], r[3], r[4], r[1], r[6] == BACKGROUND) for r in now_rows):
        before = then.get((pair["source"], pair["target"]))
        named = {"source_name": _name(pair["source"], names),
                 "target_name": _name(pair["target"], names),
                 "points": on_pair[(pair["source"], pair["target"])]}  # fmt: skip
        if pair["conflict"] and not (before and before["conflict"]):
            changes.append({**pair, **named, "kind": "newly contradicted"})
            continue
        agreed = [rel for rel, ps in pair["relations"].items() if len(ps) >= 2
                  and before is not None and len(before["relations"].get(rel, [])) == 1]  # fmt: skip
        if agreed:
            changes.append({**pair, **named, "kind": "newly confirmed", "agreed": agreed})
    return changes


# --- rendering ----------------------------------------------------------------------------------


def render_digest(d: dict[str, Any], fmt: str) -> str:
    """The digest as ``text``, ``markdown`` (readable in an e-mail), ``json`` or ``html``."""
    if fmt == "json":
        return json.dumps(d, indent=2, ensure_ascii=False, default=str)
    lines = _lines(d, markdown=fmt in ("markdown", "html"))
    if fmt == "html":
        return _html(lines)
    return "\n".join(lines) + "\n"


def _since(d: dict[str, Any]) -> str:
    runs = d["runs"]
    if not runs:
        return f"since {d['since']}"
    first = runs[0]
    day = str(first["started_at"] or "").replace("T", " ")[:16]
    return f"since run {first['run_id']} ({first['command']}, {day} UTC)"


def _paper_line(p: dict[str, Any]) -> str:
    bits = [str(p.get("title") or p["paper_id"])]
    bits += [str(p[k]) for k in ("journal", "year", "study") if p.get(k)]
    return f"{', '.join(bits)} [{p['paper_id']}]"


def _lines(d: dict[str, Any], *, markdown: bool) -> list[str]:
    def head(text: str, level: int = 2) -> str:
        if markdown:
            return f"{'#' * level} {text}"
        return f"{text}\n{('=' if level == 1 else '-') * len(text)}"

    def esc(text: Any) -> str:  # one line whatever a title holds (a break, a "~~~" line)
        line = " ".join(str(text).split())
        return _md(line) if markdown else line

    bullet = "- " if markdown else "  "
    title = f"What changed in collection '{d['collection']}' {_since(d)}"
    stopped = [  # a run that failed says so, and why: its digest may be short for that
        f"{bullet}Run {r['run_id']} ({r['command']}) stopped early: {esc(r['stopped'])}"
        for r in d["runs"] if r.get("stopped")
    ]  # fmt: skip
    stopped += [""] * bool(stopped)
    if d.get("nothing"):
        return [head(esc(title), 1), "", *stopped, f"Nothing new {_since(d)}."]
    lines = [head(esc(title), 1), "", *stopped]
    counts = [counted(len(d["papers"]), "new paper"), counted(sum(len(e["edges"]) for e in
              d["entities"]), "new edge")]  # fmt: skip
    changes = [c for e in d["entities"] for c in e["changes"]]
    contradicted = sum(c["kind"] == "newly contradicted" for c in changes)
    cited = sum(len(e["cited"]) for e in d["entities"])
    counts += [f"{counted(cited, 'edge')} a paper restates as known (listed apart)"] * bool(cited)
    counts += [counted(contradicted, "newly contradicted pair")] * bool(contradicted)
    counts += [counted(len(d["retracted"]), "retracted paper")] * bool(d["retracted"])
    counts += [counted(len(d["removed"]), "removed paper")] * bool(d["removed"])
    lines += [", ".join(counts) + ".", ""]
    if d["retracted"]:
        lines += [head("Retracted"), ""]
        for p in d["retracted"]:
            lines.append(f"{bullet}{esc(_paper_line(p))}: {counted(p['edges'], 'edge')} "
                         "no longer in answers")  # fmt: skip
            lines += [f"{'  ' if markdown else '    '}{bullet}{esc(_relation(e))}"
                      for e in p.get("edges_out", [])]  # fmt: skip
        lines.append("")
    for e in d["entities"]:
        if not (e["edges"] or e["cited"] or e["changes"] or e["watched"]):
            continue
        label = e["name"] + (f" ({e['id']})" if e.get("id") else "")
        marks = [w for w, on in (("watched", e["watched"]), ("new to the collection",
                 e["new_to_collection"])) if on]  # fmt: skip
        lines += [head(esc(label) + (f" — {', '.join(marks)}" if marks else "")), ""]
        for c in e["changes"]:
            sides = "; ".join(_side(c, rel) for rel in c["relations"])
            lines.append(f"{bullet}{c['kind'].capitalize()}: {esc(c['source_name'])} → "
                         f"{esc(c['target_name'])} ({esc(sides)})")  # fmt: skip
        for edge in e["edges"]:
            lines.append(f"{bullet}{esc(_relation(edge))} [{esc(edge['paper_id'])}]")
            if edge.get("evidence"):
                lines.append(f"{'  ' if markdown else '    '}{'> ' if markdown else ''}"
                             f"{esc(edge['evidence'])}")  # fmt: skip
        lines += [f"{bullet}Restated as known: {esc(_relation(edge))} [{esc(edge['paper_id'])}]"
                  for edge in e["cited"]]  # fmt: skip
        if not (e["edges"] or e["cited"] or e["changes"]):
            lines.append(f"{bullet}nothing new")
        lines.append("")
    if d["papers"]:
        lines += [head("New papers"), ""]
        lines += [f"{bullet}{esc(_paper_line(p))}: {counted(p['edges'], 'edge')}"
                  for p in d["papers"]]  # fmt: skip
        lines.append("")
    if d["removed"]:
        lines += [head("Removed papers"), ""]
        lines += [f"{bullet}{esc(p['paper_id'])}: {counted(p['edges'], 'edge')} removed"
                  for p in d["removed"]]  # fmt: skip
        lines.append("")
    if d["new_entities"]:
        lines += [head("New to the collection"), "", esc(", ".join(d["new_entities"])), ""]
    return lines


def _relation(e: dict[str, Any]) -> str:
    return f"{e['source_name']} {e['relationship_type']} {e['target_name']}"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~&])")


def _md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def _html(lines: list[str]) -> str:
    """The Markdown lines as a small self-contained HTML page (for an e-mail)."""
    import markdown_it

    body = markdown_it.MarkdownIt("commonmark", {"html": False}).render("\n".join(lines))
    title = html.escape(lines[0].lstrip("# ").replace("\\", ""))
    return (
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>"
        f"{title}</title></head>\n<body style=\"font-family: sans-serif; max-width: 50em\">\n"
        f"{body}</body></html>\n"
    )
