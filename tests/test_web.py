"""`fastbmrag serve`: the JSON API through the ASGI test client, the page in a real headless
browser, escaping, and the refusal of a non-local bind without --public."""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from doors_support import page
from starlette.testclient import TestClient

from fastbmrag import RAG
from fastbmrag.cli import cli
from fastbmrag.papers import ReadReport, iter_papers
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_ollama import FakeOllama
from fastbmrag.testing.responders import responder
from fastbmrag.web import create_app

DATA = Path(__file__).parent / "data"
EVIL = "<script>window.hacked = 1</script>"
QUESTION = "What is the role of IL1B in endometriosis?"
IL1B_KEY, ENDO_KEY = "HGNC:5992", "D004715"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RAG, FakeOllama]]:
    wd = tmp_path_factory.mktemp("web")
    papers = list(iter_papers([DATA / "query" / "papers.csv"], ReadReport()))
    papers[0].title = f"Interleukin 1 beta in endometriosis {EVIL}"  # a hostile title
    fake = FakeOllama(responder=responder).start()
    rag = RAG(wd, "papers", ollama_host=fake.url)
    assert rag.insert_paper(papers).indexed == 5
    yield rag, fake
    fake.close()


@pytest.fixture
def client(served: tuple[RAG, FakeOllama]) -> TestClient:
    return page(served[0])


def test_query_api_answers_with_citations(client: TestClient) -> None:
    r = client.post("/api/query", json={"question": QUESTION, "top_k": 10})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["answer"] and "[1]" in out["answer"]
    assert out["references"][0]["paper_id"] == "Q1"
    assert out["references"][0]["title"].endswith(EVIL)  # JSON carries the text as it is
    r = client.post(
        "/api/query",
        json={"question": "IL1B", "entities": ["IL1B"], "since": 2016, "min_score": -1},
    )
    assert {e["paper_id"] for e in r.json()["edges"]} == {"Q5"}
    # every option of the CLI's query, by the same name (one declaration: QueryOptions)
    r = client.post(
        "/api/query",
        json={"question": "IL1B", "entities": ["IL1B"], "paper_ids": ["Q5"], "no_answer": True,
              "all": True, "min_score": -1, "include_retracted": True, "match": "any"},
    )  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json()["answer"] is None and {e["paper_id"] for e in r.json()["edges"]} == {"Q5"}
    assert r.json()["filters"]["include_retracted"] is True


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"question": ""}, "'question' is required: The question, in plain words."),
        ({"question": "   "}, "'question' must be a non-empty text"),
        ({"question": "x", "since": "soon"}, "'since' must be a year from 1800 to 2100"),
        ({"question": "x", "since": 2019.5}, "'since' must be a year from 1800 to 2100"),
        ({"question": "x", "min_score": 7}, "'min_score' must be a cosine similarity from"),
        ({"question": "x", "top_k": 0}, "'top_k' must be a whole number from 1 to 100,000"),
        ({"question": "x", "entities": 5}, "'entities' must be text or a list of texts, got 5"),
        ({"question": "x", "password": "1"}, "Unknown parameter(s) of /api/query: password; "
         "it takes top_k, all, "),
        ([{"question": "x"}], "The request body must be a JSON object of the parameters of "
         "/api/query"),
        # the server's settings are not a request's to change
        ({"question": "x", "answer_model": "other"}, "Unknown parameter(s) of /api/query: "
         "answer_model"),
        ({"question": "x", "match": "most"}, "'match' must be one of all, any"),
        ({"question": "x", "relationship_types": ["cures"]}, "Unknown relationship type 'cures'"),
    ],
)
def test_bad_requests_are_400_with_the_reason(
    client: TestClient, body: Any, message: str
) -> None:
    r = client.post("/api/query", json=body)
    assert r.status_code == 400 and message in r.json()["error"]


def test_entity_path_contradictions_and_status(client: TestClient) -> None:
    card = client.get("/api/entity", params={"name": "IL1B"}).json()
    assert card["id"] == "HGNC:5992" and card["vocabulary"]["symbol"] == "IL1B"
    absent = client.get("/api/entity", params={"name": "BRCA1"}).json()  # no edge about it
    assert absent["in_collection"] is False and absent["vocabulary"]["symbol"] == "BRCA1"
    assert client.get("/api/entity").status_code == 400
    rows = client.get("/api/neighbours", params={"name": "IL1B"}).json()
    assert {r["source"] for r in rows} == {"IL1B"} and len(rows) == 2
    assert isinstance(client.get("/api/path", params={"start": "IL1B", "end": "ESR2"}).json(), list)
    assert client.get("/api/contradictions").json() == []
    status = client.get("/api/status").json()
    assert status["collection"] == "papers" and status["papers"]["done"] == 5


def test_the_page_s_filters_are_the_declared_options(client: TestClient) -> None:
    form = client.get("/api/options").json()
    assert (form["top_k"]["low"], form["top_k"]["high"], form["top_k"]["whole"]) == (
        1, 100_000, True)  # fmt: skip
    assert form["rank"]["choices"] == ["score", "design"] and form["rank"]["default"] == "score"
    assert form["min_score"]["default"] == 0.3 and "answer_model" not in form  # the server's
    # each with the input the page builds for it, and its label
    assert (form["since"]["input"], form["since"]["label"], form["since"]["low"]) == (
        "number", "From year", 1800)  # fmt: skip
    assert (form["designs"]["input"], form["rank"]["input"], form["exact"]["input"]) == (
        "list", "choice", "flag")  # fmt: skip
    assert form["entity_types"]["choices"] == ["gene", "disease", "chemical", "variant",
                                                "pathway", "cell", "other"]  # fmt: skip


def test_the_overview_and_the_entity_completion(client: TestClient) -> None:
    o = client.get("/api/overview").json()
    assert (o["collection"], o["papers"], o["retracted_papers"]) == ("papers", 5, 0)
    assert o["edges"] > 0 and o["last_update"]
    top = o["top"]["gene"]
    assert top and top == sorted(top, key=lambda r: -r["degree"])
    assert o["top"]["disease"][0]["name"] == "Endometriosis"  # the most connected disease
    assert f"What is the role of {top[0]['name']} in Endometriosis?" in o["examples"]
    assert len(o["recent_papers"]) == 5 and all(p["title"] for p in o["recent_papers"])
    found = client.get("/api/entities", params={"text": "il1"}).json()
    assert found[0]["name"] == "IL1B" and found[0]["id"] == "HGNC:5992"
    assert client.get("/api/entities", params={"text": "HGNC:5992"}).json()[0]["name"] == "IL1B"
    assert client.get("/api/entities", params={"text": "zzzz"}).json() == []
    assert client.get("/api/entities").status_code == 400


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/api/neighbours?name=IL1B&limit=-5", "'limit' must be a whole number from 1 to 200, got -5"),
        ("/api/neighbours?name=IL1B&limit=abc", "'limit' must be a whole number from 1 to 200, got 'abc'"),
        ("/api/path?start=IL1B&end=ESR2&max_hops=99", "'max_hops' must be a whole number from 1 to 6, got 99"),
        ("/api/path?start=IL1B&end=ESR2&max_hops=0", "'max_hops' must be a whole number from 1 to 6, got 0"),
        ("/api/path?start=IL1B&end=ESR2&max_hops=-3", "'max_hops' must be a whole number from 1 to 6, got -3"),
    ],
)  # fmt: skip
def test_bad_parameters_are_400_naming_the_parameter(
    client: TestClient, url: str, message: str
) -> None:
    r = client.get(url)
    assert r.status_code == 400 and r.json() == {"error": message}


def test_an_unknown_api_path_or_method_is_json_naming_what_there_is(client: TestClient) -> None:
    r = client.get("/api/query")
    assert r.status_code == 405
    assert r.json() == {"error": "GET is not allowed on /api/query: use POST"}
    r = client.get("/api/nodes")
    assert r.status_code == 404 and r.json()["error"].startswith(
        "No API endpoint /api/nodes: there are /api/status, /api/overview, /api/entities"
    )
    assert client.get("/nowhere").status_code == 404  # the page's own paths stay plain


def test_a_lone_surrogate_in_a_question_is_answered_as_json(client: TestClient) -> None:
    body = b'{"question": "STAT3 \\ud800 in endometriosis", "min_score": -1}'
    r = client.post("/api/query", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = b'{"question": "x", "min_score": NaN}'
    r = client.post("/api/query", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"] == "'min_score' must be a cosine similarity from -1 to 1, got nan"
    r = client.get("/api/entity?name=IL1B%ff%fe")  # bytes that are not UTF-8 in a parameter
    assert r.status_code == 200 and r.json()["id"] == "HGNC:5992"


def test_a_model_server_that_is_down_is_503(served: tuple[RAG, FakeOllama], tmp_path: Path) -> None:
    rag, _ = served
    down = RAG(rag.working_dir, "papers", ollama_host="http://127.0.0.1:9")
    question = "Which genes does TNF regulate?"  # not cached by the other tests
    r = page(down).post("/api/query", json={"question": question})
    assert r.status_code == 503, r.text
    assert r.json()["error"].startswith("Cannot reach Ollama at http://127.0.0.1:9")
    assert r.json()["retry"] is False


def test_an_update_holding_the_store_is_503_with_retry(
    served: tuple[RAG, FakeOllama], client: TestClient
) -> None:
    rag, _ = served
    with Collection.writer(rag.working_dir, "papers"):
        r = client.post("/api/query", json={"question": QUESTION})
    assert r.status_code == 503 and r.json()["retry"] is True
    assert "being updated" in r.json()["error"]


def test_a_public_bind_needs_public(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", "-c", "x", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert result.stderr.strip().startswith(
        "Error: Binding to 0.0.0.0 would let others on the network use the page"
    )
    assert "add --public" in result.stderr


# --- the page in a real headless browser ---------------------------------------------------


def _browser() -> Any:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no chromium and chromedriver here (.ci/run installs Debian's chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,900",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


@contextlib.contextmanager
def served_app(rag: RAG) -> Iterator[str]:
    """The app over ``rag`` served by uvicorn on a free port of 127.0.0.1: its base URL."""
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(create_app(rag), host="127.0.0.1", port=0, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def _page(rag: RAG) -> Iterator[tuple[Any, str]]:
    """A headless browser and the URL of the app served over ``rag``."""
    browser = _browser()
    try:
        with served_app(rag) as url:
            yield browser, url
    finally:
        browser.quit()


def test_the_page_asks_shows_evidence_and_draws_the_graph(
    served: tuple[RAG, FakeOllama], request: pytest.FixtureRequest
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    rag, _ = served
    with _page(rag) as (browser, url):
        browser.get(url)
        wait = WebDriverWait(browser, 30)
        wait.until(ec.text_to_be_present_in_element((By.ID, "collection"), "papers: 5 papers"))
        box = browser.find_element(By.ID, "question")
        box.send_keys(QUESTION)
        browser.find_element(By.CSS_SELECTOR, "#ask button").click()
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#answer a.cite")))
        assert "IL1B" in browser.find_element(By.ID, "answer").text
        # what the question names, above the answer, each name a link to its card
        assert browser.find_element(By.ID, "understood").text == (
            "Understood: IL1B (HGNC:5992), Endometriosis (D004715)"
        )
        browser.find_element(By.CSS_SELECTOR, "#understood a.entity").click()
        wait.until(ec.text_to_be_present_in_element((By.ID, "entity"), "IL1B (gene, HGNC:5992)"))
        # a hostile title is shown as text, never run
        assert EVIL in browser.find_element(By.ID, "references").text
        assert browser.execute_script("return window.hacked === undefined")
        browser.find_element(By.CSS_SELECTOR, "#answer a.cite").click()
        wait.until(
            ec.visibility_of_element_located((By.CSS_SELECTOR, "#evidence .evidence-sentence"))
        )
        sentence = browser.find_element(By.CSS_SELECTOR, "#evidence .evidence-sentence").text
        edges = rag.query(QUESTION)["edges"]
        evidence = edges[0]["payload"]["evidence"][0]
        assert sentence == evidence["text"]
        # where the sentence is in the paper
        place = browser.find_element(By.CSS_SELECTOR, "#evidence .place").text
        assert place == {"title": "Title", "abstract": "Abstract"}.get(evidence["where"], place)
        nodes = {e["payload"][k] for e in edges for k in ("source_key", "target_key")}
        drawn = browser.execute_script("return window.fastbmragGraph.nodes().length")
        assert drawn == len(nodes)
        labels = browser.execute_script(
            "return window.fastbmragGraph.edges().map((e) => e.style('label'))"
        )
        assert labels and all(labels)  # every edge names its relationship type
        assert "gene" in browser.find_element(By.ID, "legend").text
        shot = Path(request.config.rootpath) / "tests" / "web-page.png"
        browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        # two nodes picked in the graph: the card of the second offers the path between them
        browser.execute_script(
            "const cy = window.fastbmragGraph; cy.$id(arguments[0]).emit('tap');"
            "cy.$id(arguments[1]).emit('tap');",
            IL1B_KEY,
            ENDO_KEY,
        )
        wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#entity button.path-from")))
        browser.find_element(By.CSS_SELECTOR, "#entity button.path-from").click()
        wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#entity .path")))
        path = browser.find_element(By.CSS_SELECTOR, "#entity .path").text
        assert "IL1B" in path and "Endometriosis" in path and "papers" in path
        browser.save_screenshot(str(shot.with_name("web-path.png")))


def test_the_start_page_shows_the_collection_and_the_url_keeps_the_question(
    served: tuple[RAG, FakeOllama],
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    rag, _ = served
    with _page(rag) as (browser, url):
        browser.get(url)
        wait = WebDriverWait(browser, 30)
        wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#start a.example")))
        start = browser.find_element(By.ID, "start").text
        assert "Most connected genes" in start and "Endometriosis" in start
        # the filters offer exactly what the library declares
        from fastbmrag.query import QueryOptions
        from fastbmrag.web import query_form

        form = query_form()
        top_k = browser.find_element(By.ID, "top_k")
        assert (top_k.get_attribute("min"), top_k.get_attribute("max")) == (
            str(int(form["top_k"]["low"])), str(int(form["top_k"]["high"]))
        )  # fmt: skip
        assert top_k.get_attribute("value") == str(QueryOptions().top_k)
        # the form is built from them: an input per declared option, labelled as declared
        inputs = browser.find_elements(By.CSS_SELECTOR, "#filters input, #filters select")
        assert [i.get_attribute("id") for i in inputs] == list(form)
        labels = browser.execute_script(
            "return [...document.querySelectorAll('#filters label')].map((l) => [...l.childNodes]"
            ".filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim())"
        )
        assert labels[: len(form)] == [o["label"] for o in form.values()]
        link = browser.find_element(By.ID, "link")  # a flag on by default: its box checked
        assert link.is_selected() and not browser.find_element(By.ID, "exact").is_selected()
        ranks = browser.find_elements(By.CSS_SELECTOR, "#rank option")
        assert [o.get_attribute("value") for o in ranks] == form["rank"]["choices"]
        shots = Path(__file__).parent
        browser.save_screenshot(str(shots / "web-start.png"))
        example = browser.find_element(By.CSS_SELECTOR, "#start a.example")
        asked = example.text
        example.click()  # an example question is asked at once
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#answer a.cite")))
        assert browser.find_element(By.ID, "question").get_attribute("value") == asked
        assert "q=" in browser.current_url
        # a bookmarked view: the question and a filter come back from the URL and are asked
        browser.get(url + "?q=IL1B&entities=IL1B&since=2016&min_score=-1&no_answer=true")
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#answer li")))
        assert browser.find_element(By.ID, "since").get_attribute("value") == "2016"
        assert browser.find_element(By.ID, "no_answer").is_selected()
        shown = browser.find_element(By.ID, "answer").text
        assert "1 edge (" in shown and "IL1B" in shown  # the one edge of 2016 and later
        browser.save_screenshot(str(shots / "web-bookmarked.png"))
        # entity search completes from the collection's entities
        search = browser.find_element(By.ID, "entity-search")
        search.send_keys("IL1")
        wait.until(
            lambda b: (
                "IL1B"
                in b.execute_script(
                    "return [...document.querySelectorAll('#entity-options option')]"
                    ".map((o) => o.value)"
                )
            )
        )


def test_an_entity_card_on_the_page_shows_where_papers_disagree(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait
    from test_graph import PAPERS, scripted  # IL1B up in endometriosis (P1), down (P2)

    from fastbmrag.papers import Paper

    with FakeOllama(responder=scripted) as fake:
        rag = RAG(tmp_path / "wd", "g", ollama_host=fake.url)
        papers = [Paper(pid, title=v[0], abstract=v[1]) for pid, v in PAPERS.items()]
        assert rag.insert_paper(papers).indexed == len(PAPERS)
        with _page(rag) as (browser, url):
            browser.get(url)
            wait = WebDriverWait(browser, 30)
            search = browser.find_element(By.ID, "entity-search")
            search.send_keys("IL1B\n")
            browser.execute_script(
                "document.getElementById('entity-search').dispatchEvent(new Event('change'))"
            )
            wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#entity .disagreement")))
            line = browser.find_element(By.CSS_SELECTOR, "#entity .disagreement").text
            assert "IL1B -> Endometriosis" in line and "(P1)" in line and "(P2)" in line


def test_the_start_page_says_what_is_new_and_shows_a_new_disagreement_side_by_side(
    tmp_path: Path,
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait
    from test_graph import PAPERS, scripted  # IL1B up in endometriosis (P1), down (P2)

    from fastbmrag.papers import Paper

    with FakeOllama(responder=scripted) as fake:
        rag = RAG(tmp_path / "wd", "g", ollama_host=fake.url)
        papers = [Paper(pid, title=v[0], abstract=v[1]) for pid, v in PAPERS.items()]
        assert rag.insert_paper([p for p in papers if p.paper_id != "P2"]).indexed
        assert rag.insert_paper([p for p in papers if p.paper_id == "P2"]).indexed == 1  # a run
        rag.watch(["IL1B"])
        with _page(rag) as (browser, url):
            browser.get(url)
            wait = WebDriverWait(browser, 30)
            wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#whats-new .news-link")))
            news = browser.find_element(By.ID, "whats-new").text
            assert news.startswith("What's new since run 2 (update, ")
            assert "1 new paper, 1 new edge" in news
            first = browser.find_element(By.CSS_SELECTOR, "#whats-new .news-link")
            assert first.text == "IL1B"  # the watched entity first
            browser.find_element(By.CSS_SELECTOR, "#whats-new .news-conflict").click()
            wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#evidence .side")))
            sides = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "#evidence .side")]
            assert len(sides) == 2 and any("[P1]" in s for s in sides)
            assert any("[P2]" in s for s in sides)
            browser.save_screenshot(str(Path(__file__).parent / "web-whats-new.png"))
            first.click()  # an entity is a link to its card
            wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#entity .disagreement")))


def test_the_page_filters_by_design_and_marks_each_reference_with_it(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait
    from test_design import PAPERS

    from fastbmrag.papers import Paper

    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path / "wd", "d", ollama_host=fake.url)
        papers = [Paper(pid, abstract=text, design="rct" if types else "",
                        design_from="metadata" if types else "",
                        organisms=["human"] if tags else [],
                        organisms_from="metadata" if tags else "")
                  for pid, text, types, tags in PAPERS]  # fmt: skip
        assert rag.insert_paper(papers, pubtator=False).indexed == 3
        with _page(rag) as (browser, url):
            wait = WebDriverWait(browser, 30)
            browser.get(url + "?q=What+is+known+about+endometriosis%3F&designs=rct&min_score=-1")
            wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#references li")))
            refs = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#references li")]
            assert len(refs) == 1 and "A1" in refs[0] and "[RCT, humans]" in refs[0]
            assert browser.find_element(By.ID, "designs").get_attribute("value") == "rct"
            browser.get(url + "?q=What+is+known+about+endometriosis%3F&min_score=-1")
            wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#references li")))
            marks = [m.text for m in browser.find_elements(By.CSS_SELECTOR, "#references .design")]
            assert "[RCT, humans]" in marks
            assert any("(model-judged)" in m for m in marks)  # a model's label, said so
