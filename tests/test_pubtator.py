"""PubTator3 grounding: the client against the fake PubTator3 server (format facts, batches,
429, not yet annotated, the cache), the grounding rules, and `update` / `sync` end to end with
the fake model server, request counts asserted."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fastbmrag.cli import cli
from fastbmrag.index import UpdateOptions
from fastbmrag.index.edges import name_ends
from fastbmrag.index.grounding import PaperGrounding, fold
from fastbmrag.papers.pubtator import (
    Annotation,
    AnnotationCache,
    Document,
    PubTatorClient,
    PubTatorSettings,
    PubTatorUnavailable,
    Request,
    parse_documents,
    request_for,
)
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_eutils import FakeEutils
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.fake_pubtator import FakePubTator
from fastbmrag.testing.responders import responder
from fastbmrag.text.sentences import Sentence
from fastbmrag.vocab import load_normalizer

BIORED = Path(__file__).parent / "data" / "biored" / "train_first3.PubTator"
SLICE = Path(__file__).parent / "data" / "eutils" / "pubmed21n1298_slice.xml"  # 4 papers
# an annotation of each type with an id no dictionary gives: (PubTator3's type, id, ours)
UNHEARD = {
    "gene": ("Gene", "99999999", "NCBIGene:99999999"),
    "disease": ("Disease", "MESH:C000042", "C000042"),
    "chemical": ("Chemical", "MESH:C000042", "C000042"),
}

# Two PubMed papers and one without ids. The model (the fake's pipeline answer) relates the
# genes it sees to the first disease; PubTator3 annotates the first paper's names, not the
# second's (not yet annotated).
PAPERS = [
    {
        "paper_id": "31000001",
        "pmid": "31000001",
        "article_title": "TNF-α in endometriosis",
        "abstract": "TNF-α is upregulated in endometriosis lesions. "
        "Peritoneal fluid of women with endometriosis holds more MIF than controls.",
    },
    {
        "paper_id": "31000002",
        "pmid": "31000002",
        "article_title": "VEGFA and adenomyosis",
        "abstract": "VEGFA is upregulated in adenomyosis. The lesions grow.",
    },
    {
        "paper_id": "local-1",
        "article_title": "IL6 and endometriosis",
        "abstract": "IL6 is a biomarker of endometriosis. Nothing else is known.",
    },
]
ANNOTATED = (
    # PubTator3 writes TNF-α folded, and grounds it to the mouse gene: the human one is meant
    ("TNF-α", "Gene", "21926"),
    ("endometriosis", "Disease", "MESH:D004715"),
)


@pytest.fixture
def fake() -> Iterator[FakePubTator]:
    with FakePubTator() as server:
        p = PAPERS[0]
        server.add(p["pmid"], p["article_title"], p["abstract"], ANNOTATED,
                   names={"TNF-α": "Tnf"})  # fmt: skip
        yield server


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with FakeOllama(responder=responder) as server:
        yield server


def papers_csv(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "papers.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["paper_id", "pmid", "article_title", "abstract"])
        w.writeheader()
        w.writerows(PAPERS)
    return path


def update(tmp_path: Path, ollama: FakeOllama, *extra: str, env: dict[str, str]) -> Result:
    return CliRunner().invoke(
        cli,
        ["update", "--collection", "c", "--working-dir", str(tmp_path / "wd"), "--ollama-host",
         ollama.url, str(papers_csv(tmp_path)), *extra],
        env=env,
    )  # fmt: skip


def ends(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Each end of each stored edge by paper and name as written: its id, match, grounding."""
    out: dict[str, dict[str, Any]] = {}
    with Collection.reader(tmp_path / "wd", "c") as coll:
        for hit in coll.scroll():
            p = hit.payload
            for role in ("source", "target"):
                out[f"{p['paper_id']}:{p[f'{role}_raw']}"] = {
                    "id": p[f"{role}_id"], "match": p[f"{role}_match"], "type": p[f"{role}_type"],
                    "grounding": p[f"{role}_grounding"], "name": p[role],
                }  # fmt: skip
    return out


def on(fake: FakePubTator) -> dict[str, str]:
    return {"FASTBMRAG_PUBTATOR": "1", "FASTBMRAG_PUBTATOR_URL": fake.url}


# --- the client ----------------------------------------------------------------------------


def client(fake: FakePubTator, tmp_path: Path, **kw: Any) -> PubTatorClient:
    cache = AnnotationCache(tmp_path / "pubtator.sqlite")
    return PubTatorClient(PubTatorSettings(url=fake.url), cache, **kw)


def test_client_reads_biocjson_as_pubtator3_writes_it(tmp_path: Path) -> None:
    with FakePubTator(BIORED) as fake:
        pmids = list(fake.docs)
        c = client(fake, tmp_path)
        docs = c.documents([Request("pmid", p) for p in pmids] + [Request("pmid", "1")])
        assert fake.count() == 1  # one request for the four ids
        assert docs["pmid:1"] is None and c.report.not_yet == 1  # not annotated: no failure
        doc = docs[f"pmid:{pmids[0]}"]
        assert doc is not None and doc.pmid == pmids[0] and doc.pmcid == ""
        gene = next(a for a in doc.annotations if a.type == "gene")
        assert gene.identifier.isdigit()  # normalized_id was an integer, identifier a string
        disease = next(a for a in doc.annotations if a.type == "disease")
        assert disease.identifier.startswith("MESH:D")
        assert {a.passage for a in doc.annotations} == {"title", "abstract"}
        variants = [a.identifier for a in doc.annotations if a.type == "variant"]
        assert variants and all(v.startswith(("rs", "p.", "c.")) or "|" in v for v in variants)
        c.close()


def test_an_annotation_with_several_ids_gives_none() -> None:
    doc = {"_id": "1|None", "passages": [{"infons": {"type": "abstract"}, "offset": 0, "annotations": [
        {"infons": {"type": "Gene", "identifier": "5609;5610"}, "text": "MEK", "locations": [{"offset": 0}]},
        {"infons": {"type": "Chemical", "identifier": "-"}, "text": "BE9", "locations": [{"offset": 4}]},
        {"infons": {"type": "Mutation", "identifier": "tmVar:c|SUB|A|2063|G;HGVS:c.2063A>G;VariantGroup:0"},
         "text": "A2063G", "locations": [{"offset": 8}]},
        {"infons": {"type": "ProteinMutation", "identifier": "RS#:121434568;HGVS:p.L858R;CorrespondingGene:1956"},
         "text": "L858R", "locations": [{"offset": 15}]},
    ]}]}  # fmt: skip
    (parsed,) = parse_documents({"PubTator3": [doc]})
    assert [(a.type, a.identifier) for a in parsed.annotations] == [
        ("gene", ""), ("chemical", ""), ("variant", "c.2063A>G"), ("variant", "rs121434568"),
    ]  # fmt: skip


def test_client_batches_100_ids_honours_retry_after_and_caches(tmp_path: Path) -> None:
    slept: list[float] = []
    with FakePubTator(BIORED) as fake:
        c = client(fake, tmp_path, sleep=slept.append)
        fake.fail(429, retry_after=2.5)
        fake.fail(503)
        ids = [Request("pmid", str(10_000 + i)) for i in range(150)]
        c.documents(ids)
        # 150 ids: two batches; the first answered 429 (waited as told), then 503 (backoff)
        assert [r.status for r in fake.requests] == [429, 503, 200, 200]
        assert slept == [2.5, 2.0]
        assert max(len(r.params["pmids"].split(",")) for r in fake.requests) == 100
        fake.requests.clear()
        c.documents(ids)  # asked today: the cache answers, even for "not yet annotated"
        assert fake.count() == 0
        c.documents(ids[:3], refresh=True)  # a sync asks again for those not annotated yet
        assert fake.count() == 1
        c.close()


def test_a_pmc_paper_is_asked_by_its_pmcid_and_one_with_main_text_in_full(tmp_path: Path) -> None:
    assert request_for("", "pmc123", full=True) == Request("pmcid", "PMC123")
    assert request_for("31000001", "PMC123", full=True) == Request("pmid-full", "31000001")
    assert request_for("31000001", "", full=True) == Request("pmid", "31000001")
    assert request_for("", "", full=True) is None and request_for("n/a", "x", full=False) is None
    with FakePubTator() as fake, client(fake, tmp_path) as c:
        fake.add("31000001", "TNF-α", "TNF-α rises.", ANNOTATED, pmcid="PMC123")
        docs = c.documents([Request("pmcid", "PMC123"), Request("pmid-full", "31000001")])
        assert [r.path.rsplit("/", 2)[-2] for r in fake.requests] == ["pmc_export", "export"]
        assert fake.requests[1].params["full"] == "true"
        pmc = docs["pmcid:PMC123"]
        assert pmc is not None and (pmc.pmid, pmc.pmcid) == ("31000001", "PMC123")
        assert [a.text for a in pmc.annotations if a.type == "gene"] == ["TNF-a", "TNF-a"]


def test_client_names_an_unreachable_or_failing_service(tmp_path: Path) -> None:
    with FakePubTator() as fake:
        url = fake.url
    with (
        PubTatorClient(PubTatorSettings(url=url)) as nobody,
        pytest.raises(PubTatorUnavailable, match="cannot connect"),
    ):
        nobody.documents([Request("pmid", "1")])
    with FakePubTator() as fake, client(fake, tmp_path, sleep=lambda s: None) as failing:
        fake.fail(500, times=10)
        with pytest.raises(PubTatorUnavailable, match=r"failed 4 times \(HTTP 500\)"):
            failing.documents([Request("pmid", "1")])


# --- the grounding rules ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def normalizer() -> Any:
    return load_normalizer()


class Said:
    def __init__(self, text: str, where: str = "abstract") -> None:
        self.text, self.where = text, where


def doc(*anns: tuple[str, str, str], name: str = "") -> Document:
    return Document("1", "", tuple(Annotation(t, i, x, 0, "abstract", name) for x, t, i in anns))


def test_folding_agrees_on_greek_letters_spaces_and_hyphens() -> None:
    assert fold("TNF-α") == fold("TNF alpha") == fold("tnf-a") == fold("TNF a")
    assert fold("IL-1β") == fold("IL1 beta") == fold("il-1b")
    assert fold("Diabetes") != fold("Diabetes beta")


def test_grounding_order_and_ids(normalizer: Any) -> None:
    g = PaperGrounding(
        doc(("TNF-a", "gene", "7124"), ("BRCA1", "gene", "672"), ("endometriosis", "disease",
            "MESH:D004715"), ("Huntington disease", "disease", "OMIM:143100"),
            ("cisplatin", "chemical", "MESH:C000001"), ("V600E", "variant", "p.V600E")),
        normalizer,
    )  # fmt: skip
    cited = [Said("TNF-α levels rise in endometriosis.")]
    tnf = g.ground("TNF-α", "gene", cited)
    assert tnf is not None and (tnf.ontology_id, tnf.normalized_name) == ("HGNC:11892", "TNF")
    assert tnf.matched_by == "pubtator"
    brca = g.ground("BRCA1 mutations", "gene", cited)  # (b): elsewhere in the paper, head word
    assert brca is not None and brca.ontology_id == "HGNC:1100"
    assert g.ground("BRCA1 inhibitor", "gene", cited) is None  # not a head word of a gene
    assert g.ground("endometriosis", "gene", cited) is None  # another type: not this one
    assert g.ground("Huntington disease", "disease") is None  # OMIM only: the dictionaries
    chem = g.ground("cisplatin", "chemical")
    assert chem is not None and chem.ontology_id == "C000001"  # a supplementary id, kept
    variant = g.ground("V600E", "variant")
    assert variant is not None and variant.ontology_id == "p.V600E"


def test_two_ids_for_one_name_give_none(normalizer: Any) -> None:
    g = PaperGrounding(doc(("p53", "gene", "7157"), ("p53", "gene", "22059")), normalizer)
    assert g.ground("p53", "gene") is None  # human TP53 and mouse Trp53: the dictionaries
    mouse = PaperGrounding(doc(("Tnf", "gene", "21926"), ("Trp53", "gene", "22059")), normalizer)
    tnf, trp53 = mouse.ground("Tnf", "gene"), mouse.ground("Trp53", "gene")
    assert tnf is not None and tnf.ontology_id == "HGNC:11892"  # human TNF: the same symbol
    assert trp53 is not None and trp53.ontology_id == "NCBIGene:22059"  # TP53 is another


def test_only_an_annotation_of_the_name_itself_and_its_type_grounds_it(normalizer: Any) -> None:
    """The paper's other annotations decide nothing: an ambiguous name stays ambiguous though
    the paper annotates one of its candidates elsewhere, and a name the tagger typed otherwise
    than the model keeps the model's type (measured on real tagger output: both added more wrong
    ids than right)."""
    ambiguous = normalizer.normalize("p50", "gene")  # names NFKB1 and others
    assert ambiguous.ontology_id is None and "HGNC:7794" in ambiguous.candidates
    context = "p50 binds DNA. NF-kappaB1 is active."
    cited = [Sentence("p50 binds DNA.", "abstract", 0, 14)]
    nfkb1 = PaperGrounding(doc(("NF-kappaB1", "gene", "4790")), normalizer)
    (end,) = name_ends(normalizer, "p50", "gene", context, nfkb1, cited)
    assert (end.norm.ontology_id, end.norm.matched_by, end.grounding) == (None, "ambiguous", "none")
    typed_gene = PaperGrounding(doc(("p50", "gene", "4790")), normalizer)
    (end,) = name_ends(normalizer, "p50", "disease", context, typed_gene, cited)
    assert (end.type, end.grounding) == ("disease", "none")
    (end,) = name_ends(normalizer, "p50", "gene", context, typed_gene, cited)
    assert (end.norm.ontology_id, end.grounding) == ("HGNC:7794", "pubtator")


# --- update and sync end to end ----------------------------------------------------------------


def test_update_grounds_on_pubtator_then_the_dictionary(
    tmp_path: Path, fake: FakePubTator, ollama: FakeOllama
) -> None:
    result = update(tmp_path, ollama, env=on(fake))
    assert result.exit_code == 0, result.output
    assert "ids: 1 papers by PubTator3, 1 by the dictionaries, 1 not yet annotated" in result.output
    assert fake.count() == 1  # both PMIDs in one request; the paper without one asks nothing
    found = ends(tmp_path)
    tnf = found["31000001:TNF-α"]
    assert (tnf["id"], tnf["name"], tnf["grounding"]) == ("HGNC:11892", "TNF", "pubtator")
    assert found["31000001:endometriosis"]["grounding"] == "pubtator"
    assert found["31000001:MIF"]["grounding"] == "dictionary"  # not annotated: the dictionary
    assert found["31000002:VEGFA"]["grounding"] == "dictionary"  # not yet annotated
    assert found["local-1:IL6"]["grounding"] == "dictionary"  # no PMID

    chats = ollama.counts["/api/chat"]
    again = update(tmp_path, ollama, "--force", env=on(fake))
    assert again.exit_code == 0, again.output
    assert fake.count() == 1  # the cache answered: no request
    assert ollama.counts["/api/chat"] == chats  # and the model's answers came from its cache
    assert ends(tmp_path) == found


def test_a_supplementary_concept_is_found_under_its_heading_and_counted_by_status(
    tmp_path: Path, ollama: FakeOllama
) -> None:
    """PubTator3 gives a MeSH supplementary concept (C id) for "endometriosis": the node keeps
    the C id; with NLM's supplementary records (`vocab update`) its heading is among its
    ancestors, so an entity filter on the heading finds the edge; `status` counts the C ids with
    and without a known heading."""
    p = PAPERS[0]
    with FakePubTator() as fake:
        fake.add(p["pmid"], p["article_title"], p["abstract"],
                 (("endometriosis", "Disease", "MESH:C562650"),))  # fmt: skip
        bundled = update(tmp_path / "bundled", ollama, env=on(fake))
        assert bundled.exit_code == 0, bundled.output
        wd = str(tmp_path / "bundled" / "wd")
        out = CliRunner().invoke(cli, ["status", "-c", "c", "--working-dir", wd, "--json"]).output
        assert json.loads(out)["supplementary"] == {"ids": 1, "with_heading": 0,
                                                    "without_heading": 1}  # fmt: skip
        text = CliRunner().invoke(cli, ["status", "-c", "c", "--working-dir", wd]).output
        assert "1 supplementary concept (MeSH C ids): 0 under a heading descriptor, 1 whose " \
            "heading the vocabularies do not know" in text

        vocab = Path(__file__).parent / "data" / "vocab"
        rebuilt = CliRunner().invoke(cli, [
            "vocab", "update", "--quiet", "--hgnc", str(vocab / "hgnc_slice.tsv"),
            "--mesh", str(vocab / "desc_excerpt.xml"),
            "--gene-info", str(vocab / "gene_info_slice.tsv"),
            "--mesh-supplementary", str(vocab / "supp_excerpt.xml"),
        ])  # fmt: skip
        assert rebuilt.exit_code == 0, rebuilt.output
        placed = update(tmp_path / "placed", ollama, env=on(fake))
        assert placed.exit_code == 0, placed.output
    end = ends(tmp_path / "placed")["31000001:endometriosis"]
    assert (end["id"], end["name"], end["grounding"]) == (
        "C562650", "Endometriosis, rare form", "pubtator")
    wd = str(tmp_path / "placed" / "wd")
    out = CliRunner().invoke(cli, ["status", "-c", "c", "--working-dir", wd, "--json"]).output
    assert json.loads(out)["supplementary"] == {"ids": 1, "with_heading": 1, "without_heading": 0,
                                                "edges_without_headings": 0}  # fmt: skip
    found = CliRunner().invoke(cli, [
        "query", "-c", "c", "--working-dir", wd, "--ollama-host", ollama.url, "--no-answer",
        "--no-llm-parse", "--entity", "D004715", "--json", "What raises endometriosis?",
    ])  # fmt: skip
    assert found.exit_code == 0, found.output
    papers = {e["paper_id"] for e in json.loads(found.output)["edges"]}
    # the heading's own edge, and the C id's through the heading (a descriptor with nothing
    # below it in MeSH has its supplementary concepts below it)
    assert papers == {"local-1", "31000001"}


def test_no_pubtator_and_an_unreachable_service_give_the_dictionary_ids(
    tmp_path: Path, fake: FakePubTator, ollama: FakeOllama, caplog: pytest.LogCaptureFixture
) -> None:
    off = update(tmp_path / "off", ollama, "--no-pubtator", env=on(fake))
    assert off.exit_code == 0, off.output
    assert fake.count() == 0 and "PubTator3" not in off.output
    dictionary = ends(tmp_path / "off")
    assert {e["grounding"] for e in dictionary.values()} <= {"dictionary", "none"}
    assert dictionary["31000001:TNF-α"]["id"] == "HGNC:11892"

    url = fake.url
    fake.stop()
    down = update(tmp_path / "down", ollama,
                  env={"FASTBMRAG_PUBTATOR": "1", "FASTBMRAG_PUBTATOR_URL": url})  # fmt: skip
    assert down.exit_code == 0, down.output
    warned = [r.getMessage() for r in caplog.records if "PubTator3 cannot be" in r.getMessage()]
    assert len(warned) == 1 and "(FASTBMRAG_PUBTATOR=0 skips it)" in warned[0]
    assert {k: v["id"] for k, v in ends(tmp_path / "down").items()} == {
        k: v["id"] for k, v in dictionary.items()
    }


def test_sync_regrounds_a_paper_once_annotated_with_no_chat_call(
    tmp_path: Path, fake: FakePubTator, ollama: FakeOllama
) -> None:
    wd = tmp_path / "wd"

    def sync(eutils: FakeEutils) -> Result:
        return CliRunner().invoke(
            cli,
            ["sync", "--collection", "c", "--query", "endometriosis", "--email", "a@b.org",
             "--eutils-url", eutils.url, "--fulltext-url", eutils.fulltext_url, "--ollama-host",
             ollama.url, "--working-dir", str(wd), "--since", "2000-01-01", "--quiet"],
            env=on(fake),
        )  # fmt: skip

    with FakeEutils(SLICE) as eutils:
        first = sync(eutils)
        assert first.exit_code == 0, first.output
        assert "0 papers by PubTator3" in first.output and "4 not yet annotated" in first.output
        before = ends(tmp_path)
        # NCBI annotates one paper: a name the model wrote, with an id no dictionary gives it,
        # so that the re-keying shows
        pmid, raws = next(
            (k.split(":")[0], [v for v in before if v.startswith(k.split(":")[0])]) for k in before
        )
        with Collection.reader(wd, "c") as coll:
            cited = " ".join(e["text"] for h in coll.scroll() if h.payload["paper_id"] == pmid
                             for e in h.payload["evidence"])  # fmt: skip
        raw = raws[0].split(":", 1)[1]
        kind, ident, ours = UNHEARD[before[raws[0]]["type"]]
        fake.add(pmid, "", cited, [(raw, kind, ident)])
        chats, requests = ollama.counts["/api/chat"], fake.count()
        second = sync(eutils)
    assert second.exit_code == 0, second.output
    # its edges embedded again: the statements did not change, the cache answers them all
    assert ("1 paper re-grounded on PubTator3 (no chat call; 0 embedding requests to the model "
            "server, 6 texts embedded from the cache)") in second.output  # fmt: skip
    assert ollama.counts["/api/chat"] == chats
    assert fake.count() == requests + 1  # the four not yet annotated, asked again at once
    after = ends(tmp_path)
    assert after[raws[0]]["id"] == ours and after[raws[0]]["grounding"] == "pubtator"
    assert {k: v for k, v in after.items() if not k.startswith(pmid)} == {
        k: v for k, v in before.items() if not k.startswith(pmid)
    }


# --- a service or a cache that misbehaves ----------------------------------------------------


def test_a_reply_that_trickles_is_given_up_at_the_deadline(tmp_path: Path) -> None:
    with FakePubTator(BIORED) as fake:
        fake.trickle(0.2)  # a byte every 0.2 s: each read is in time, the whole is not
        slow = PubTatorClient(PubTatorSettings(url=fake.url, timeout=1.0))
        started = time.monotonic()
        with slow, pytest.raises(PubTatorUnavailable, match="did not send its reply within 1 s"):
            slow.documents([Request("pmid", "10491763")])
        assert time.monotonic() - started < 10 and fake.count() == 1  # no retry


@pytest.mark.parametrize(
    "reply",
    [
        b'{"PubTator3": [{"_id": "1", "passages": [null]}]}',
        b'{"PubTator3": [{"_id": "1", "passages": [{"annotations": [{"text": "TNF", '
        b'"infons": {"type": "Gene"}, "locations": [null]}]}]}]}',
        b'{"PubTator3": [{"_id": "1", "passages": [{"infons": ["x"], "annotations": []}]}]}',
        b'{"PubTator3": [{"_id": "1", "infons": ["x"], "passages": []}]}',
        b'{"PubTator3": {"_id": "1"}}',
    ],
)
def test_a_malformed_reply_is_unavailable_not_an_error(tmp_path: Path, reply: bytes) -> None:
    with FakePubTator() as fake, client(fake, tmp_path) as c:
        fake.answer_raw(reply)
        with pytest.raises(PubTatorUnavailable, match="not BioC JSON as it writes it") as err:
            c.documents([Request("pmid", "1")])
        assert "(beginning '{\"PubTator3\"" in str(err.value)  # the text, not a bytes value


def test_a_cache_that_cannot_be_read_is_set_aside_or_bypassed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    cache = AnnotationCache.open(junk)
    assert cache is not None and (tmp_path / "junk.sqlite.broken").is_file()
    cache.close()
    folder = tmp_path / "folder.sqlite"
    folder.mkdir()
    assert AnnotationCache.open(folder) is None
    said = [r.getMessage() for r in caplog.records]
    assert any("moved to" in m for m in said) and any("fetched without it" in m for m in said)
    # a damaged row is fetched again, not an error
    good = AnnotationCache(tmp_path / "rows.sqlite")
    with good._conn:
        good._conn.execute("INSERT INTO documents VALUES ('pmid:1', 'not a date', NULL)")
        good._conn.execute("INSERT INTO documents VALUES ('pmid:2', '2026-01-01', '{bad')")
    now = datetime.now(UTC)
    assert good.get("pmid:1", now=now) == (False, None)
    assert good.get("pmid:2", now=now) == (False, None)
    good.close()


def test_the_pubtator_setting_takes_the_usual_off_words(
    tmp_path: Path, ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    for word, is_on in (("0", False), ("false", False), ("No", False), ("off", False),
                        ("1", True), ("yes", True)):  # fmt: skip
        monkeypatch.setenv("FASTBMRAG_PUBTATOR", word)
        assert UpdateOptions().pubtator is is_on
    bad = update(tmp_path, ollama, env={"FASTBMRAG_PUBTATOR": "maybe"})
    assert bad.exit_code == 2
    assert "FASTBMRAG_PUBTATOR='maybe' is neither on nor off" in bad.output
