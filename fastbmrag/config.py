"""Settings: flag > environment variable > default. Each default is named once, here."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastbmrag.declared import check, declared, option
from fastbmrag.errors import ConfigError, InputError
from fastbmrag.util.wording import option_named

__version__ = "0.2.0"  # the package's version (read by the build, shown by --version)

DEFAULT_HOME = "~/.fastbmrag"
DEFAULT_OLLAMA_HOST = "http://localhost:11434"
DEFAULT_LLM_MODEL = "phi4"
DEFAULT_EMBED_MODEL = "mxbai-embed-large"
DEFAULT_CONCURRENCY = 4
DEFAULT_WRITE_WAIT = 60.0  # seconds an update waits for readers of the embedded store (cron)
DEFAULT_EMBED_BATCH = 64
DEFAULT_NUM_CTX = 8192
DEFAULT_LLM_BACKEND = "ollama"
DEFAULT_OPENAI_BASE_URL = "http://localhost:8000/v1"  # vLLM's default
DEFAULT_PREFLIGHT_TIMEOUT = 15.0  # seconds for each request of the preflight
MAX_TOP_K = 100_000  # edges one query's search returns (--all: every one)
# The whole-number options of an indexing run, (lowest, highest): the command line's ranges and
# the library's checks both read this
UPDATE_RANGES: dict[str, tuple[int, int]] = {
    "concurrency": (1, 1024),
    "chunk_chars": (200, 20_000),
    "chunk_overlap": (0, 5000),
    "top_k": (1, 20),
    "commit_every": (1, 100_000),
    "num_predict": (16, 1_000_000),
}
# Indexing, documented in README ("Indexing"): ~300 tokens per chunk keeps the refine prompt of
# a 10-relation paper (<= 30 chunks, most shared) well inside an 8k context.
DEFAULT_CHUNK_CHARS = 1200
DEFAULT_CHUNK_OVERLAP = 150
DEFAULT_REFINE_TOP_K = 3  # main-text chunks per relation
DEFAULT_MIN_SIMILARITY = 0.35
# Completion caps: the draft's 20 relations of <= 30 tokens each with their entities, plus
# slack; the refine call's ~80 tokens per relation for 20 relations.
DEFAULT_DRAFT_NUM_PREDICT = 1024
DEFAULT_REFINE_NUM_PREDICT = 2400
# Query: edges retrieved, and the cosine below which an edge is no evidence (mxbai-embed-large
# puts on-topic statements at 0.5-0.8).
DEFAULT_QUERY_TOP_K = 50
DEFAULT_MIN_SCORE = 0.3

# Environment variables (the ecosystem's own where one exists).
ENV_HOME = "FASTBMRAG_HOME"
ENV_COLLECTION = "FASTBMRAG_COLLECTION"
ENV_LLM_MODEL = "FASTBMRAG_LLM_MODEL"
ENV_EMBED_MODEL = "FASTBMRAG_EMBED_MODEL"
ENV_ANSWER_MODEL = "FASTBMRAG_ANSWER_MODEL"
ENV_OLLAMA_HOST = "OLLAMA_HOST"
ENV_QDRANT_URL = "QDRANT_URL"
ENV_NUM_PREDICT = "FASTBMRAG_NUM_PREDICT"
ENV_QDRANT_API_KEY = "QDRANT_API_KEY"
ENV_OPENAI_BASE_URL = "OPENAI_BASE_URL"
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
ENV_PREFLIGHT_TIMEOUT = "FASTBMRAG_PREFLIGHT_TIMEOUT"
# PubMed (fetch, sync) and the vocabularies' sources (vocab update)
ENV_NCBI_EMAIL = "NCBI_EMAIL"
ENV_NCBI_API_KEY = "NCBI_API_KEY"
ENV_EUTILS_URL = "FASTBMRAG_EUTILS_URL"
ENV_FULLTEXT_URL = "FASTBMRAG_FULLTEXT_URL"
ENV_PUBTATOR_URL = "FASTBMRAG_PUBTATOR_URL"
ENV_PUBTATOR = "FASTBMRAG_PUBTATOR"  # 0/false/no/off: the dictionaries only (--no-pubtator)
ENV_HGNC_URL = "FASTBMRAG_HGNC_URL"
ENV_MESH_URL = "FASTBMRAG_MESH_URL"
ENV_GENE_INFO_URL = "FASTBMRAG_GENE_INFO_URL"
ENV_MESH_SUPPLEMENTARY_URL = "FASTBMRAG_MESH_SUPPLEMENTARY_URL"

DEFAULT_EUTILS_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
DEFAULT_FULLTEXT_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest/{pmcid}/fullTextXML"
DEFAULT_PUBTATOR_URL = "https://www.ncbi.nlm.nih.gov/research/pubtator3-api"
DEFAULT_HGNC_URL = (
    "https://storage.googleapis.com/public-download-files/hgnc/tsv/tsv/hgnc_complete_set.txt"
)
# NLM publishes one descriptor file per MeSH year; {year} is the current year.
DEFAULT_MESH_URL = "https://nlmpubs.nlm.nih.gov/projects/mesh/MESH_FILES/xmlmesh/desc{year}.xml"
DEFAULT_MESH_SUPPLEMENTARY_URL = (
    "https://nlmpubs.nlm.nih.gov/projects/mesh/MESH_FILES/xmlmesh/supp{year}.xml"
)
DEFAULT_GENE_INFO_URL = (
    "https://ftp.ncbi.nlm.nih.gov/gene/DATA/GENE_INFO/Mammalia/Homo_sapiens.gene_info.gz"
)


def setting(value: str | None, env: str, default: str | None = None) -> str | None:
    """A setting without a function of its own: the flag's ``value``, else the environment
    variable ``env``, else ``default``."""
    return value or os.environ.get(env) or default


OFF_WORDS = frozenset({"0", "false", "no", "off"})
ON_WORDS = frozenset({"1", "true", "yes", "on"})


def pubtator_on() -> bool:
    """Whether PubTator3 grounds papers with a PMID or PMCID: on unless ``FASTBMRAG_PUBTATOR``
    says off (0, false, no, off); a word that is neither is refused."""
    raw = (os.environ.get(ENV_PUBTATOR) or "").strip().lower()
    if raw and raw not in OFF_WORDS | ON_WORDS:
        raise ConfigError(
            f"{ENV_PUBTATOR}={raw!r} is neither on nor off: set it to 0 (off) or 1 (on), or "
            "unset it"
        )
    return raw not in OFF_WORDS


def home() -> Path:
    """Where all state lives unless a command is given ``--working-dir``."""
    return Path(os.environ.get(ENV_HOME) or DEFAULT_HOME).expanduser()


def working_dir(value: str | os.PathLike[str] | None = None) -> Path:
    return Path(value).expanduser() if value else home()


def checked_url(url: str, setting: str, example: str) -> str:
    """``url`` if it is an http(s) URL with a host, else ConfigError naming the ``setting``."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is no number
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        why = "no http(s) scheme and host"
    except ValueError as err:
        ok, why = False, str(err)
    if not ok:
        raise ConfigError(
            f"{setting} is {url!r}, which is not an http(s) URL ({why}): set it to, e.g., "
            f"{example}"
        )
    return url


def _each(value: str, one: Callable[[str], str], setting: str, example: str) -> str:
    """Every server of a comma-separated list through ``one``; a list that names none (",")
    is a ConfigError naming the ``setting``."""
    servers = ",".join(one(p.strip()) for p in value.split(",") if p.strip())
    if not servers:
        raise ConfigError(
            f"{setting} is {value!r}, which names no server: set it to, e.g., {example}, or "
            "unset it"
        )
    return servers


def _ollama_url(host: str) -> str:
    if "://" not in host:  # OLLAMA_HOST is often given as host:port
        host = "http://" + host
    return checked_url(host.rstrip("/"), f"{option_named('ollama_host')} / {ENV_OLLAMA_HOST}", DEFAULT_OLLAMA_HOST)


def ollama_host(value: str | None = None) -> str:
    """The Ollama server(s): a URL, ``host:port``, or a comma-separated list of them; a blank
    one is not set."""
    raw = (value or os.environ.get(ENV_OLLAMA_HOST) or "").strip() or DEFAULT_OLLAMA_HOST
    setting = f"{option_named('ollama_host')} / {ENV_OLLAMA_HOST}"
    return _each(raw, _ollama_url, setting, DEFAULT_OLLAMA_HOST)


@contextlib.contextmanager
def ollama_import_environment() -> Iterator[None]:
    """While the ``ollama`` package is imported, ``OLLAMA_HOST`` is unset: the package builds a
    module-level client from it at import (which this project never uses), and a value it
    cannot parse (a list of servers, a typo) would fail every command there, with a traceback,
    before :func:`ollama_host` could refuse it in one line where a server is needed."""
    raw = os.environ.pop(ENV_OLLAMA_HOST, None)
    try:
        yield
    finally:
        if raw is not None:
            os.environ[ENV_OLLAMA_HOST] = raw


def llm_model(value: str | None = None) -> str:
    return value or os.environ.get(ENV_LLM_MODEL) or DEFAULT_LLM_MODEL


def embed_model(value: str | None = None) -> str:
    return value or os.environ.get(ENV_EMBED_MODEL) or DEFAULT_EMBED_MODEL


def qdrant_url(value: str | None = None) -> str | None:
    url = value or os.environ.get(ENV_QDRANT_URL) or None
    if url is None or url == ":memory:":
        return url
    return checked_url(url, f"{option_named('qdrant_url')} / {ENV_QDRANT_URL}", "http://localhost:6333")


def qdrant_api_key(value: str | None = None) -> str | None:
    return value or os.environ.get(ENV_QDRANT_API_KEY) or None


def _openai_url(url: str) -> str:
    url = url.rstrip("/")
    url = url if url.endswith("/v1") else url + "/v1"
    url = url if "://" in url else "http://" + url
    return checked_url(url, f"{option_named('openai_base_url')} / {ENV_OPENAI_BASE_URL}", DEFAULT_OPENAI_BASE_URL)


def openai_base_url(value: str | None = None) -> str:
    """The OpenAI-compatible server(s)' /v1 URL, or a comma-separated list of them; a blank
    one is not set."""
    raw = (value or os.environ.get(ENV_OPENAI_BASE_URL) or "").strip() or DEFAULT_OPENAI_BASE_URL
    setting = f"{option_named('openai_base_url')} / {ENV_OPENAI_BASE_URL}"
    return _each(raw, _openai_url, setting, DEFAULT_OPENAI_BASE_URL)


def openai_api_key(value: str | None = None) -> str | None:
    return value or os.environ.get(ENV_OPENAI_API_KEY) or None


def _from_env(env: str, parse: Callable[[str], Any], kind: str, example: str) -> Any:
    """The value of the environment variable ``env`` read by ``parse`` (None where unset or
    blank); one it cannot read is a ConfigError naming the variable."""
    raw = (os.environ.get(env) or "").strip()
    if not raw:
        return None
    try:
        return parse(raw)
    except ValueError:
        raise ConfigError(f"{env}={raw!r} is not {kind}: set it to, e.g., {example}") from None


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting of a run, resolved once: flag > environment variable > default.

    Build it with :func:`resolve`; :class:`fastbmrag.RAG` builds everything else from it. The
    settings a value can be out of are declared as options are (:mod:`fastbmrag.declared`):
    their range or choices, held by :func:`resolve` at every door; 0 is a value, never "the
    default".
    """

    working_dir: Path
    collection: str | None = None
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    llm_backend: str = option(DEFAULT_LLM_BACKEND, help="The model server's kind.",
                              choices=("ollama", "openai"))  # fmt: skip
    host: str = DEFAULT_OLLAMA_HOST  # the Ollama host, or the OpenAI-compatible base URL
    api_key: str | None = None  # OpenAI-compatible servers only
    llm_model: str = DEFAULT_LLM_MODEL
    embed_model: str = DEFAULT_EMBED_MODEL
    answer_model: str | None = None
    concurrency: int = option(
        DEFAULT_CONCURRENCY, low=1, high=1024, whole=True,
        help="Requests in flight to the model server at once (Ollama: OLLAMA_NUM_PARALLEL).",
    )  # fmt: skip
    embed_batch: int = option(DEFAULT_EMBED_BATCH, help="Texts per embedding request.",
                              low=1, high=4096, whole=True)  # fmt: skip
    num_ctx: int = option(
        DEFAULT_NUM_CTX, low=256, high=1_048_576, whole=True,
        help="Ollama context window in tokens (longer prompts are cut by the server).",
    )  # fmt: skip
    num_predict: int | None = option(  # completion cap of the draft and refine calls
        None, help="Tokens the model writes per call.", low=16, high=1_000_000, whole=True,
        env=ENV_NUM_PREDICT,
    )  # fmt: skip
    preflight_timeout: float = option(  # each request of the server check
        DEFAULT_PREFLIGHT_TIMEOUT, help="Seconds each request of the server check may take.",
        low=0.001, high=86_400, kind="a number of seconds", env=ENV_PREFLIGHT_TIMEOUT,
    )  # fmt: skip
    use_cache: bool = option(True, help="Read and write the model's response cache.")
    normalize: bool = option(True, help="Ground names to HGNC and MeSH ids.")
    # why the model server setting was refused: said where a model server is needed, so that
    # the commands that need none (status, normalize, entity ...) run whatever it says
    host_error: str | None = None

    def server(self) -> str:
        """``host``, checked: ConfigError with the setting's refusal where it was refused."""
        if self.host_error is not None:
            raise ConfigError(self.host_error)
        return self.host

    @property
    def hosts(self) -> tuple[str, ...]:
        """The model servers (``host`` may list several, comma-separated)."""
        return tuple(h for h in self.server().split(",") if h)


FLAGS = (
    "working_dir",
    "collection",
    "qdrant_url",
    "qdrant_api_key",
    "llm_backend",
    "ollama_host",
    "openai_base_url",
    "openai_api_key",
    "llm_model",
    "embed_model",
    "answer_model",
    "concurrency",
    "embed_batch",
    "num_ctx",
    "num_predict",
    "preflight_timeout",
    "use_cache",
    "normalize",
)


def resolve(**given: Any) -> Settings:
    """The settings from flags (keyword arguments named as in :data:`FLAGS`; None or missing:
    not given), then the environment, then the defaults."""
    unknown = sorted(set(given) - set(FLAGS))
    if unknown:
        raise InputError(f"Unknown setting {unknown[0]!r}: use one of {', '.join(FLAGS)}",
                         field=unknown[0])  # fmt: skip
    flag = given.get
    if os.environ.get(ENV_PUBTATOR_URL):  # read when a run starts grounding: checked here first
        checked_url(os.environ[ENV_PUBTATOR_URL], ENV_PUBTATOR_URL, DEFAULT_PUBTATOR_URL)
    given_env = {
        "num_predict": _from_env(ENV_NUM_PREDICT, int, "a whole number of tokens", "1024"),
        "preflight_timeout": _from_env(ENV_PREFLIGHT_TIMEOUT, float, "a number of seconds", "15"),
    }

    def chosen(name: str, default: Any) -> Any:
        """The flag's value (0 and False too), else the environment's, else ``default``."""
        value = flag(name)
        if value is None:
            value = given_env.get(name)
        return default if value is None else value

    backend = chosen("llm_backend", DEFAULT_LLM_BACKEND)
    openai = backend == "openai"
    host_error = None
    try:
        host = openai_base_url(flag("openai_base_url")) if openai else ollama_host(
            flag("ollama_host"))
    except ConfigError as err:
        host, host_error = "", str(err.args[0])  # as raised: its option marked
    settings = Settings(
        working_dir=working_dir(flag("working_dir")),
        collection=flag("collection") or os.environ.get(ENV_COLLECTION) or None,
        qdrant_url=qdrant_url(flag("qdrant_url")),
        qdrant_api_key=qdrant_api_key(flag("qdrant_api_key")),
        llm_backend=backend,
        host=host,
        host_error=host_error,
        api_key=openai_api_key(flag("openai_api_key")) if openai else None,
        llm_model=llm_model(flag("llm_model")),
        embed_model=embed_model(flag("embed_model")),
        answer_model=flag("answer_model") or os.environ.get(ENV_ANSWER_MODEL) or None,
        concurrency=chosen("concurrency", DEFAULT_CONCURRENCY),
        embed_batch=chosen("embed_batch", DEFAULT_EMBED_BATCH),
        num_ctx=chosen("num_ctx", DEFAULT_NUM_CTX),
        num_predict=chosen("num_predict", None),
        preflight_timeout=chosen("preflight_timeout", DEFAULT_PREFLIGHT_TIMEOUT),
        use_cache=chosen("use_cache", True),
        normalize=chosen("normalize", True),
    )
    try:
        check(settings)
    except InputError as err:  # a value from the environment: the variable named too
        name = err.field or ""
        if flag(name) is None and given_env.get(name) is not None:
            env = next(o.env for f, o in declared(Settings) if f.name == name)
            raise ConfigError(f"{env}={os.environ[env].strip()!r}: {err.args[0]}") from None
        raise
    return settings


def setting_span(name: str) -> str:
    """A setting's declared range as the last sentence of its help (" From 1 to 1,024.")."""
    opt = next(o for f, o in declared(Settings) if f.name == name)
    span = opt.span().lstrip(" ,")
    return f" {span[0].upper()}{span[1:]}."


def flags(values: dict[str, Any]) -> dict[str, Any]:
    """The settings flags among a command's options (each named as its setting)."""
    return {k: v for k, v in values.items() if k in FLAGS}


def crash_log(err: BaseException) -> str:
    """Append ``err``'s traceback to ``<home>/logs/crash.log`` (else a file in the temporary
    directory) and return the file's path."""
    text = "".join(traceback.format_exception(err))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    candidates = [working_dir(None) / "logs", Path(tempfile.gettempdir())]
    for folder in candidates:
        path = folder / "crash.log" if folder != candidates[-1] else folder / "fastbmrag-crash.log"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(f"--- {stamp} {' '.join(sys.argv)}\n{text}\n")
            return str(path)
        except OSError:
            continue
    return "nowhere (no writable log folder)"
