"""PubMed / full-text fetch against the fake E-utilities server (real MEDLINE and JATS files)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from fastbmrag.config import DEFAULT_FULLTEXT_URL
from fastbmrag.errors import ConfigError, FetchError, InputError
from fastbmrag.papers.eutils import FetchSettings, PubMedClient
from fastbmrag.papers.fetch import date_window, fetch_papers
from fastbmrag.testing.fake_eutils import HANG, FakeEutils

EUTILS = Path(__file__).parent / "data" / "eutils"
SLICE = EUTILS / "pubmed21n1298_slice.xml"  # 32772885 33155662 33169800 33316284
NEJM = EUTILS / "pubmed-29768149.xml"  # 29768149, no PMCID
JATS = EUTILS / "PMC2774577.nxml"  # PMID 19920991, PMCID PMC2774577, full text served
ALL = {"32772885", "33155662", "33169800", "33316284", "29768149", "19920991"}


@pytest.fixture
def fake() -> Iterator[FakeEutils]:
    with FakeEutils(SLICE, NEJM, JATS) as server:
        yield server


def settings_for(fake: FakeEutils, **kw: object) -> FetchSettings:
    base: dict[str, object] = {
        "email": "curator@example.org",
        "api_key": "test-key",  # 10 requests/s at Entrez's throttle keeps the tests quick
        "eutils_url": fake.url,
        "fulltext_url": fake.fulltext_url,
        "backoff": 0.0,
    }
    base.update(kw)
    return FetchSettings.resolve(**base)  # type: ignore[arg-type]


def fetch(fake: FakeEutils, **kw: object) -> tuple[list, PubMedClient]:  # type: ignore[type-arg]
    settings = settings_for(fake, **kw.pop("settings", {}))  # type: ignore[arg-type]
    with PubMedClient(settings) as client:
        return list(fetch_papers(client, "endometriosis[tiab]", **kw)), client  # type: ignore[arg-type]


def test_fetch_reads_real_records_and_full_text(fake: FakeEutils) -> None:
    papers, client = fetch(fake)
    by_id = {p.paper_id: p for p in papers}
    assert set(by_id) == ALL
    # newest Entrez date first, as PubMed's "most recent" order
    assert [p.pmid for p in papers][:2] == ["33316284", "33169800"]

    full = by_id["19920991"]
    assert full.pmcid == "PMC2774577"
    assert full.title.startswith("Automated Quantitative Assessment of Proteins")
    assert full.paragraphs[0].startswith("[1. Introduction] Life scientists seek to accumulate")
    assert full.doi == "10.1155/2008/897019"

    no_text = by_id["33155662"]  # lists PMC7716714, which the service does not have (404)
    assert no_text.pmcid == "PMC7716714"
    assert no_text.title == "Zoledronic acid impairs oral cancer stem cells by reducing CCL3."
    assert no_text.paragraphs == []
    assert no_text.abstract  # abstract-only papers are kept

    assert by_id["29768149"].pmcid == ""
    assert by_id["29768149"].journal == "The New England journal of medicine"

    # full text asked only for the three records with a PMCID
    asked = sorted(r.path.split("/")[-2] for r in fake.requests if r.kind == "fulltext")
    assert asked == ["PMC2774577", "PMC7709829", "PMC7716714"]
    assert client.report.found == 6
    assert client.report.fetched == 6
    assert client.report.full_text == 1
    assert client.report.no_full_text == 2
    assert client.report.line() == "6 found, 0 already indexed, 6 fetched (1 with full text)"


def test_requests_carry_tool_email_and_key(fake: FakeEutils) -> None:
    fetch(fake)
    first = fake.requests[0]
    assert first.kind == "esearch"
    assert first.params["tool"] == "fastbmrag"
    assert first.params["email"] == "curator@example.org"
    assert first.params["api_key"] == "test-key"
    efetch = [r for r in fake.requests if r.kind == "efetch"]
    assert len(efetch) == 1
    assert efetch[0].params["db"] == "pubmed"
    assert efetch[0].params["retmode"] == "xml"


def test_efetch_in_batches(fake: FakeEutils) -> None:
    papers, _ = fetch(fake, settings={"batch_size": 4})
    assert len(papers) == 6
    assert fake.count("efetch") == 2
    assert sorted(fake.efetched_ids()) == sorted(ALL)


def test_429_and_500_are_retried(fake: FakeEutils) -> None:
    fake.fail("esearch", 429)
    fake.fail("efetch", 500)
    fake.fail("fulltext", 503)
    papers, client = fetch(fake)
    assert {p.paper_id for p in papers} == ALL
    statuses = [(r.kind, r.status) for r in fake.requests]
    assert statuses[:4] == [("esearch", 429), ("esearch", 200), ("efetch", 500), ("efetch", 200)]
    assert ("fulltext", 503) in statuses
    assert client.report.retries == 3
    assert next(p for p in papers if p.pmid == "19920991").has_main_text


def test_dropped_connection_is_retried(fake: FakeEutils) -> None:
    fake.fail("efetch", 0)
    papers, client = fetch(fake)
    assert len(papers) == 6
    assert [r.status for r in fake.requests if r.kind == "efetch"] == [0, 200]
    assert client.report.retries == 1


def test_a_server_that_never_answers_times_out_and_is_retried(fake: FakeEutils) -> None:
    fake.fail("esearch", HANG)
    fake.fail("fulltext", HANG)
    papers, client = fetch(fake, settings={"timeout": 0.5})
    assert {p.paper_id for p in papers} == ALL
    assert [r.status for r in fake.requests if r.kind == "esearch"] == [HANG, 200]
    assert client.report.retries == 2
    assert next(p for p in papers if p.pmid == "19920991").has_main_text


def test_backoff_doubles_and_honours_retry_after(fake: FakeEutils) -> None:
    fake.fail("esearch", 503, times=3)
    fake.fail("efetch", 429, retry_after=7)
    pauses: list[float] = []
    settings = settings_for(fake, backoff=1.0, max_backoff=3.0)
    with PubMedClient(settings, sleep=pauses.append) as client:
        papers = list(fetch_papers(client, "q", max_papers=1))
    assert [p.pmid for p in papers] == ["33316284"]
    assert pauses == [1.0, 2.0, 3.0, 3.0]  # 1, 2, 4 capped at 3; Retry-After 7 capped at 3


def test_gives_up_after_max_tries_with_a_clear_message(fake: FakeEutils) -> None:
    fake.fail("esearch", 429, times=5)
    settings = settings_for(fake, api_key=None, max_tries=3)
    pauses: list[float] = []
    with PubMedClient(settings, sleep=pauses.append) as client, pytest.raises(FetchError) as err:
        list(fetch_papers(client, "q"))
    msg = str(err.value)
    assert "PubMed esearch failed 3 times (HTTP 429)" in msg
    assert "NCBI_API_KEY" in msg
    assert fake.count("esearch") == 3
    assert len(pauses) == 2


def test_unreachable_server_is_a_fetch_error() -> None:
    with FakeEutils() as gone:
        url = gone.url  # a port nothing listens on once the server stops
    settings = FetchSettings.resolve(email="a@example.org", eutils_url=url, max_tries=2)
    with PubMedClient(settings, sleep=lambda s: None) as client, pytest.raises(FetchError) as err:
        list(fetch_papers(client, "q"))
    assert "failed 2 times (connection error" in str(err.value)
    assert err.value.exit_code == 2


def test_full_text_failure_leaves_that_paper_out(fake: FakeEutils) -> None:
    fake.fail("fulltext", 500, times=10)
    papers, client = fetch(fake, settings={"max_tries": 2})
    # the three papers with a PMCID hit the failing service; the other three are kept
    assert {p.pmid for p in papers} == {"32772885", "33316284", "29768149"}
    assert set(client.report.failed) == {"33155662", "33169800", "19920991"}
    assert "Full text of PMC2774577 failed 2 times (HTTP 500)" in client.report.failed["19920991"]


def test_bad_query_answer_is_a_fetch_error(fake: FakeEutils) -> None:
    settings = settings_for(fake)
    with PubMedClient(settings) as client, pytest.raises(FetchError) as err:
        client.esearch("q", mindate=date(2020, 1, 1), maxdate=None, datetype="sdat")
    assert "PubMed rejected the search" in str(err.value)


def test_date_window_on_entrez_date(fake: FakeEutils) -> None:
    papers, _ = fetch(fake, mindate=date(2020, 11, 7), maxdate=date(2020, 12, 31))
    assert [p.pmid for p in papers] == ["33316284", "33169800"]
    search = fake.requests[0]
    assert search.params["datetype"] == "edat"
    assert (search.params["mindate"], search.params["maxdate"]) == ("2020/11/07", "2020/12/31")


def test_publication_date_window(fake: FakeEutils) -> None:
    # 33155662 and 33169800 were entered in Nov 2020 but published Jan 2021
    papers, _ = fetch(fake, mindate=date(2021, 1, 1), maxdate=date(2021, 1, 31), datetype="pdat")
    assert sorted(p.pmid for p in papers) == ["33155662", "33169800"]


def test_skip_set_drops_known_pmids_before_efetch(fake: FakeEutils) -> None:
    papers, client = fetch(fake, skip={"33316284", "29768149", "PMC2774577"})
    assert {p.pmid for p in papers} == {"32772885", "33155662", "33169800"}
    assert "33316284" not in fake.efetched_ids()
    assert "29768149" not in fake.efetched_ids()
    # known by PMCID (e.g. indexed from its JATS file): fetched as a record, no full text asked
    assert "19920991" in fake.efetched_ids()
    assert not any(r.path.endswith("PMC2774577/fullTextXML") for r in fake.requests)
    assert client.report.known == 3


def test_max_papers_takes_the_newest(fake: FakeEutils) -> None:
    papers, _ = fetch(fake, max_papers=2)
    assert [p.pmid for p in papers] == ["33316284", "33169800"]
    assert fake.requests[0].params["retmax"] == "2"


def test_paging_and_window_splitting_beyond_the_esearch_cap(fake: FakeEutils) -> None:
    papers, _ = fetch(
        fake,
        mindate=date(2018, 1, 1),
        maxdate=date(2021, 12, 31),
        settings={"esearch_cap": 2, "esearch_page": 2},
    )
    assert {p.pmid for p in papers} == ALL - {"19920991"}  # entered 2008
    searches = [r for r in fake.requests if r.kind == "esearch"]
    assert len(searches) > 3
    assert all(int(r.params["retmax"]) <= 2 for r in searches)


def test_paging_without_splitting(fake: FakeEutils) -> None:
    papers, _ = fetch(fake, settings={"esearch_page": 4})
    assert {p.pmid for p in papers} == ALL
    searches = [r.params["retstart"] for r in fake.requests if r.kind == "esearch"]
    assert searches == ["0", "4"]


def test_records_added_between_calls_are_found(fake: FakeEutils) -> None:
    before, _ = fetch(fake, mindate=date(2024, 5, 1), maxdate=date(2024, 5, 2))
    assert before == []
    fake.add_jats(EUTILS / "PMC2775685.nxml", entrez_date=date(2024, 5, 2))
    after, _ = fetch(fake, mindate=date(2024, 5, 1), maxdate=date(2024, 5, 2))
    assert [(p.pmid, p.pmcid) for p in after] == [("19920989", "PMC2775685")]
    assert after[0].title == "Comparing Quantitative Trait Loci and Gene Expression Data"
    assert after[0].has_main_text


def test_entrez_throttle_applies_without_a_key(fake: FakeEutils) -> None:
    fetch(fake, settings={"api_key": None, "full_text": False})
    fetch(fake, settings={"api_key": None, "full_text": False})
    times = [r.at for r in fake.requests if r.kind in ("esearch", "efetch")]
    assert len(times) == 4
    # NCBI: at most 3 requests/s without an API key (Entrez waits 0.37 s); the mean gap
    # as the server saw it, which scheduling jitter on a busy machine hardly moves
    assert (times[-1] - times[0]) / (len(times) - 1) >= 0.33


def test_entrez_throttle_is_faster_with_a_key(fake: FakeEutils) -> None:
    fetch(fake, settings={"full_text": False})
    fetch(fake, settings={"full_text": False})
    times = [r.at for r in fake.requests if r.kind in ("esearch", "efetch")]
    assert len(times) == 4
    # 10 requests/s with a key: 0.1 s apart as sent; the server sees them with the transport's
    # jitter (a busy machine delays one arrival), so the bound leaves room for it
    assert (times[-1] - times[0]) / (len(times) - 1) >= 0.06


def test_settings_need_an_email(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NCBI_EMAIL", raising=False)
    with pytest.raises(ConfigError, match="pass email you@example.org or set NCBI_EMAIL"):
        FetchSettings.resolve()
    monkeypatch.setenv("NCBI_EMAIL", "lab@example.org")
    monkeypatch.setenv("NCBI_API_KEY", "abc123")
    s = FetchSettings.resolve()
    assert (s.email, s.api_key, s.fulltext_url) == (
        "lab@example.org",
        "abc123",
        DEFAULT_FULLTEXT_URL,
    )


def test_settings_urls_from_env_and_europe_pmc_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FASTBMRAG_EUTILS_URL", "http://mirror.example/eutils/")
    monkeypatch.setenv("FASTBMRAG_FULLTEXT_URL", "http://epmc.example/rest")
    s = FetchSettings.resolve(email="a@example.org")
    assert s.eutils_url == "http://mirror.example/eutils"
    assert s.fulltext_url == "http://epmc.example/rest/{pmcid}/fullTextXML"
    with pytest.raises(ConfigError, match="not an http"):
        FetchSettings.resolve(email="a@example.org", eutils_url="ftp://x")


def test_date_window_options() -> None:
    today = date(2024, 5, 10)
    assert date_window(days=7, today=today) == (date(2024, 5, 3), today)
    assert date_window(since=date(2024, 1, 1), today=today) == (date(2024, 1, 1), today)
    assert date_window(today=today) == (None, None)
    with pytest.raises(InputError, match="not both"):
        date_window(since=date(2024, 1, 1), days=3, today=today)
    with pytest.raises(InputError, match="in the future"):
        date_window(since=date(2024, 6, 1), today=today)
