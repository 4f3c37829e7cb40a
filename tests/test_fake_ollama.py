"""The fake Ollama, driven over real HTTP by httpx and by the official `ollama` client."""

from __future__ import annotations

import json
import math
from typing import Any, Literal

import httpx
import ollama
import pytest
from pydantic import BaseModel, Field

from fastbmrag.testing import FakeOllama, hashed_embedding, schema_instance
from fastbmrag.testing.answers import last_user_message
from fastbmrag.util.tokens import count_tokens

ABSTRACT = (
    "Interleukin-1 beta (IL1B) is upregulated in ectopic endometriotic lesions, "
    "whereas ESR1 expression is reduced in endometriosis."
)


class Entity(BaseModel):
    name: str
    entity_type: Literal["gene", "disease", "chemical"]


class Relation(BaseModel):
    source: Entity
    target: Entity
    relationship_type: Literal["upregulates", "downregulates", "associated_with"]
    confidence: float = Field(ge=0.0, le=1.0)
    count: int = Field(ge=1, le=5)
    negated: bool
    note: str | None = None


class Extraction(BaseModel):
    relations: list[Relation] = Field(min_length=1, max_length=3)
    summary: str = Field(min_length=5, max_length=40)


@pytest.fixture
def fake() -> Any:
    with FakeOllama() as server:
        yield server


def chat_body(content: str, schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "phi4",
        "messages": [{"role": "user", "content": content}],
        "stream": False,
    }
    if schema is not None:
        body["format"] = schema
    body.update(extra)
    return body


def test_version_tags_and_show(fake: FakeOllama) -> None:
    with httpx.Client(base_url=fake.url) as http:
        assert http.get("/api/version").json() == {"version": "0.9.0"}
        names = [m["name"] for m in http.get("/api/tags").json()["models"]]
        assert names == ["mxbai-embed-large:latest", "phi4:latest"]
        shown = http.post("/api/show", json={"model": "mxbai-embed-large"}).json()
        assert shown["model_info"]["fake.embedding_length"] == 64
        assert shown["capabilities"] == ["embedding"]
        missing = http.post("/api/show", json={"model": "llama9"})
        assert missing.status_code == 404
        assert missing.json() == {"error": "model 'llama9' not found"}
    assert fake.counts["/api/show"] == 2


def test_chat_answers_a_valid_deterministic_instance_of_the_format_schema(fake: FakeOllama) -> None:
    schema = Extraction.model_json_schema()
    with httpx.Client(base_url=fake.url) as http:
        first = http.post("/api/chat", json=chat_body(ABSTRACT, schema)).json()
        again = http.post("/api/chat", json=chat_body(ABSTRACT, schema)).json()
        other = http.post(
            "/api/chat", json=chat_body("TNF and VEGFA in adenomyosis", schema)
        ).json()
    value = Extraction.model_validate_json(first["message"]["content"])
    assert first == {**again, "created_at": first["created_at"]}
    assert first["done"] is True and first["done_reason"] == "stop"
    assert first["prompt_eval_count"] == count_tokens(ABSTRACT) == 37  # cl100k_base, real BPE
    assert first["eval_count"] == count_tokens(first["message"]["content"])
    words = set(ABSTRACT.replace(",", " ").replace(".", " ").split())
    assert set(value.summary.split()) <= words
    assert other["message"]["content"] != first["message"]["content"]
    assert fake.requests[0].json["format"] == schema
    assert fake.requests[0].model == "phi4"


def test_schema_instance_follows_refs_bounds_enums_and_optional() -> None:
    schema = Extraction.model_json_schema()
    assert "$defs" in schema  # nested models arrive as $ref
    for text in (ABSTRACT, "x", "", "IL6 STAT3 JAK2 in peritoneal fluid of 42 patients"):
        value = Extraction.model_validate(schema_instance(schema, text))
        for rel in value.relations:
            assert 1 <= rel.count <= 5
            assert rel.source.entity_type in ("gene", "disease", "chemical")
            assert rel.note is not None  # anyOf[string, null] takes the string branch
    assert schema_instance({"type": "integer", "exclusiveMinimum": 3, "maximum": 4}, "a") == 4
    assert schema_instance({"const": "fixed"}, "a") == "fixed"
    assert schema_instance({"type": ["null", "boolean"]}, "a") in (True, False)


def test_stream_through_the_official_client(fake: FakeOllama) -> None:
    with ollama.Client(host=fake.url) as client:
        _stream_checks(client)


def _stream_checks(client: ollama.Client) -> None:
    parts = list(
        client.chat(
            model="phi4",
            messages=[{"role": "user", "content": ABSTRACT}],
            format=Extraction.model_json_schema(),
            stream=True,
        )
    )
    assert len(parts) > 2
    assert parts[-1].done is True and parts[-1].eval_count and parts[-1].prompt_eval_count
    content = "".join(p.message.content or "" for p in parts)
    Extraction.model_validate_json(content)
    # the same request without streaming gives the same text
    whole = client.chat(
        model="phi4",
        messages=[{"role": "user", "content": ABSTRACT}],
        format=Extraction.model_json_schema(),
    )
    assert whole.message.content == content


def test_embed_is_hashed_bag_of_words(fake: FakeOllama) -> None:
    texts = [
        "IL1B is upregulated in endometriosis",
        "IL1B is upregulated in endometriosis",
        "IL1B upregulated in endometriotic lesions",
        "quarterly tax return deadline",
    ]
    with ollama.Client(host=fake.url) as client:
        resp = client.embed(model="mxbai-embed-large", input=texts)
    vecs = [list(v) for v in resp.embeddings]
    assert len(vecs) == 4 and all(len(v) == 64 for v in vecs)
    for v in vecs:
        assert math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-9)

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert vecs[0] == vecs[1]
    assert cos(vecs[0], vecs[2]) > 0.5 > abs(cos(vecs[0], vecs[3]))
    assert resp.prompt_eval_count == sum(count_tokens(t) for t in texts)
    assert vecs[0] == hashed_embedding(texts[0], 64)
    assert fake.requests[-1].json["input"] == texts


def test_dims_per_model_and_unknown_model(fake: FakeOllama) -> None:
    fake.dims = {"mxbai-embed-large": 1024, "nomic-embed-text": 768}
    fake.models.add("nomic-embed-text")
    with ollama.Client(host=fake.url) as client:
        assert len(client.embed(model="mxbai-embed-large", input=["a"]).embeddings[0]) == 1024
        assert len(client.embed(model="nomic-embed-text:latest", input="a").embeddings[0]) == 768
        with pytest.raises(ollama.ResponseError) as err:
            client.embed(model="bge-m3", input=["a"])
    assert err.value.status_code == 404
    assert err.value.error == "model 'bge-m3' not found"


def test_custom_responder_receives_the_full_request() -> None:
    seen: list[dict[str, Any]] = []

    def responder(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"gene": "IL1B", "hgnc": "HGNC:5992"}

    with FakeOllama(responder=responder) as fake, httpx.Client(base_url=fake.url) as http:
        body = chat_body(ABSTRACT, {"type": "object"}, options={"temperature": 0, "num_ctx": 8192})
        answer = http.post("/api/chat", json=body).json()
        v1 = http.post(
            "/v1/chat/completions",
            json={
                "model": "phi4",
                "messages": [{"role": "user", "content": "hi"}],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "X", "schema": {"type": "object"}, "strict": True},
                },
                "max_tokens": 99,
            },
        ).json()
    assert json.loads(answer["message"]["content"]) == {"gene": "IL1B", "hgnc": "HGNC:5992"}
    assert seen[0]["options"] == {"temperature": 0, "num_ctx": 8192}
    assert seen[0]["messages"][0]["content"] == ABSTRACT
    assert seen[1]["format"] == {"type": "object"}
    assert seen[1]["options"]["num_predict"] == 99
    assert json.loads(v1["choices"][0]["message"]["content"])["hgnc"] == "HGNC:5992"


def test_one_shot_faults_in_order(fake: FakeOllama) -> None:
    schema = Extraction.model_json_schema()
    fake.fail_next("malformed")
    fake.fail_next("truncated")
    fake.fail_next("http500")
    with httpx.Client(base_url=fake.url) as http:
        malformed = http.post("/api/chat", json=chat_body(ABSTRACT, schema)).json()
        truncated = http.post("/api/chat", json=chat_body(ABSTRACT, schema)).json()
        failed = http.post("/api/chat", json=chat_body(ABSTRACT, schema))
        fine = http.post("/api/chat", json=chat_body(ABSTRACT, schema)).json()
    with pytest.raises(json.JSONDecodeError):
        json.loads(malformed["message"]["content"])
    assert truncated["done_reason"] == "length"
    assert fine["message"]["content"].startswith(truncated["message"]["content"])
    with pytest.raises(json.JSONDecodeError):
        json.loads(truncated["message"]["content"])
    assert failed.status_code == 500 and failed.json() == {"error": "fake: internal server error"}
    Extraction.model_validate_json(fine["message"]["content"])
    assert [r.fault for r in fake.requests] == ["malformed", "truncated", "http500", None]


def test_embed_skips_chat_only_faults(fake: FakeOllama) -> None:
    fake.fail_next("malformed")
    fake.fail_next("http500")
    with httpx.Client(base_url=fake.url) as http:
        r = http.post("/api/embed", json={"model": "mxbai-embed-large", "input": ["a"]})
        assert r.status_code == 500  # the malformed fault waits for a chat request
        r = http.post("/api/chat", json=chat_body("x", {"type": "object"}))
        assert r.json()["message"]["content"].startswith("Sure!")


def test_fault_rates_are_seeded() -> None:
    def run() -> list[int]:
        with (
            FakeOllama(fault_rates={"http500": 0.5}, seed=7) as fake,
            httpx.Client(base_url=fake.url) as http,
        ):
            return [
                http.post("/api/chat", json=chat_body(str(i), {"type": "object"})).status_code
                for i in range(20)
            ]

    first = run()
    assert first == run()
    assert 3 <= first.count(500) <= 17


def test_refuse_then_accept_connections(fake: FakeOllama) -> None:
    port = fake.port
    with httpx.Client(base_url=fake.url) as http:
        assert http.get("/api/version").status_code == 200
        fake.refuse_connections()
        with pytest.raises(httpx.ConnectError):
            http.get("/api/version")
        fake.accept_connections()
        assert fake.port == port
        assert http.get("/api/version").status_code == 200


def test_records_and_reset(fake: FakeOllama) -> None:
    with httpx.Client(base_url=fake.url) as http:
        http.post("/api/embed", json={"model": "mxbai-embed-large", "input": "IL6"})
        http.get("/api/tags")
    rec = fake.requests_to("/api/embed")[0]
    assert rec.model == "mxbai-embed-large" and rec.json["input"] == "IL6"
    assert rec.ended >= rec.started and rec.status == 200
    assert fake.counts == {"/api/embed": 1, "/api/tags": 1}
    assert fake.max_in_flight == 1
    fake.fail_next("http500")
    fake.reset()
    assert fake.requests == [] and not fake.counts and fake.max_in_flight == 0
    with httpx.Client(base_url=fake.url) as http:
        assert http.post("/api/embed", json={"model": "mxbai-embed-large", "input": "x"}).is_success


def test_openai_endpoints(fake: FakeOllama) -> None:
    with httpx.Client(base_url=fake.url) as http:
        ids = [m["id"] for m in http.get("/v1/models").json()["data"]]
        assert ids == ["mxbai-embed-large", "phi4"]
        emb = http.post(
            "/v1/embeddings", json={"model": "mxbai-embed-large", "input": ["IL1B", "ESR1"]}
        ).json()
        assert [d["index"] for d in emb["data"]] == [0, 1]
        assert emb["data"][0]["embedding"] == hashed_embedding("IL1B", 64)
        missing = http.post("/v1/embeddings", json={"model": "bge-m3", "input": ["x"]})
        assert missing.status_code == 404
        assert (
            missing.json()["error"]["message"] == 'model "bge-m3" not found, try pulling it first'
        )


def test_last_user_message_ignores_repair_turns() -> None:
    request = {
        "messages": [
            {"role": "system", "content": "extract"},
            {"role": "user", "content": "abstract text"},
            {"role": "assistant", "content": "{bad"},
            {"role": "user", "content": "fix it"},
        ]
    }
    assert last_user_message(request) == "abstract text"
