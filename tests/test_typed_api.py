"""The Python API a type checker follows: ``RAG``'s methods are the registry's operations with
their real signatures (a misspelt method or keyword is an error where the user's own mypy
checks their code), the keyword TypedDicts are the declarations' (written by
``scripts/gen_keywords.py``), and at run time an argument an operation does not take is an
InputError naming what it takes."""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from fastbmrag import RAG
from fastbmrag.errors import InputError
from fastbmrag.registry import OPERATIONS

ROOT = Path(__file__).resolve().parents[1]

USE = """
from fastbmrag import RAG

rag = RAG("/tmp/x", "c")
rag.qurey("What treats asthma?")
rag.query("What treats asthma?", top_kk=5)
rag.query("What treats asthma?", True)
rag.find_entities("IL", limit="x")
fine = rag.query("What treats asthma?", top_k=5, entities=["IL6"], since=2015)
card = rag.entity("IL6", findings_only=True)
"""


def test_a_type_checker_outside_the_repository_follows_the_api(tmp_path: Path) -> None:
    from mypy import api

    (tmp_path / "use.py").write_text(USE, encoding="utf-8")
    here = os.getcwd()
    os.chdir(tmp_path)  # the installed package, found through its py.typed marker
    try:
        out, err, code = api.run(["--no-incremental", "--python-executable", sys.executable,
                                  "--no-error-summary", "use.py"])  # fmt: skip
    finally:
        os.chdir(here)
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert code == 1, out + err
    assert [line.split(":")[1] for line in errors] == ["5", "6", "7", "8"], out
    assert '"RAG" has no attribute "qurey"' in errors[0]
    assert 'Unexpected keyword argument "top_kk"' in errors[1]


def test_the_methods_a_type_checker_sees_are_the_registry_s() -> None:
    tree = ast.parse((ROOT / "fastbmrag" / "api.py").read_text(encoding="utf-8"))
    rag = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RAG")
    checked = next(n for n in rag.body if isinstance(n, ast.If))
    seen = {t.id for n in checked.body if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name)}  # fmt: skip
    assert seen == {op.name for op in OPERATIONS if op.method}


def test_the_keyword_types_are_the_declarations() -> None:
    spec = importlib.util.spec_from_file_location("gen_keywords", ROOT / "scripts" / "gen_keywords.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.main(["--check"]) == 0  # regenerate with `python scripts/gen_keywords.py`


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda r: r.contradictions(bogus=1), "rag.contradictions(): got an unexpected keyword "
         "argument 'bogus'; it takes entity, designs, organisms, findings_only"),
        (lambda r: r.digest(watch=5), "rag.digest(): got an unexpected keyword argument 'watch'"),
        (lambda r: r.query("Q", True), "rag.query(): too many positional arguments; it takes "
         "question and the declared options as keywords"),
        (lambda r: r.query("Q", top_kk=5), "Unknown option 'top_kk': use one of all"),
        (lambda r: r.find_entities("IL", limit="x"), "limit must be a whole number from 1 to 50"),
        (lambda r: r.find_entities("IL", limit=0), "limit must be a whole number from 1 to 50"),
        (lambda r: r.entity("zzqq"), "No edge of the collection is about 'zzqq', and the "
         "vocabularies do not know it"),
    ],
)  # fmt: skip
def test_an_argument_an_operation_does_not_take_is_refused_by_name(
    tmp_path: Path, call: Any, said: str
) -> None:
    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path, "c", ollama_host=fake.url)
        rag.insert_paper([{"paper_id": "P1", "abstract": "IL6 rose in asthma."}], pubtator=False)
    with pytest.raises(InputError) as err:
        call(rag)
    assert said in str(err.value)


def test_the_page_refuses_what_the_library_refuses(tmp_path: Path) -> None:
    from doors_support import page

    from fastbmrag.testing.fake_ollama import FakeOllama
    from fastbmrag.testing.responders import responder

    with FakeOllama(responder=responder) as fake:
        rag = RAG(tmp_path, "c", ollama_host=fake.url)
        rag.insert_paper([{"paper_id": "P1", "abstract": "IL6 rose in asthma."}], pubtator=False)
    client = page(rag)
    r = client.get("/api/entities?text=IL&limit=0")
    assert r.status_code == 400 and "'limit' must be a whole number from 1 to 50" in r.json()["error"]
    r = client.get("/api/entity?name=zzqq")
    assert r.status_code == 400
    assert "No edge of the collection is about 'zzqq', and the vocabularies" in r.json()["error"]
