"""Downloading the vocabularies' official files and rebuilding the user's copy
(`fastbmrag vocab update`)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastbmrag import config
from fastbmrag.errors import VocabError
from fastbmrag.vocab.building.compile import build_from_files, version_from_name


def hgnc_url(value: str | None = None) -> str:
    return config.setting(value, config.ENV_HGNC_URL, config.DEFAULT_HGNC_URL) or ""


def gene_info_url(value: str | None = None) -> str:
    return config.setting(value, config.ENV_GENE_INFO_URL, config.DEFAULT_GENE_INFO_URL) or ""


def mesh_url(value: str | None = None) -> str:
    url = config.setting(value, config.ENV_MESH_URL, config.DEFAULT_MESH_URL) or ""
    return url.replace("{year}", str(datetime.now(UTC).year))


def mesh_supplementary_url(value: str | None = None) -> str:
    url = config.setting(
        value, config.ENV_MESH_SUPPLEMENTARY_URL, config.DEFAULT_MESH_SUPPLEMENTARY_URL
    )
    return (url or "").replace("{year}", str(datetime.now(UTC).year))


def download(url: str, dest: Path, option: str, *, timeout: float = 60.0) -> Path:
    """Stream ``url`` into ``dest`` (written whole or not at all); ``option`` is the source's
    flag (``hgnc``, ``mesh``, ``gene-info``), named in the fix of a failure."""
    import httpx

    tmp = dest.with_name(dest.name + ".part")
    try:
        with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as resp:
            if resp.status_code != 200:
                raise VocabError(
                    f"Cannot download {url}: HTTP {resp.status_code}; check the URL "
                    f"(--{option}-url) or pass a local file with --{option}."
                )
            with open(tmp, "wb") as fh:
                for chunk in resp.iter_bytes(1 << 20):
                    fh.write(chunk)
    except httpx.HTTPError as err:
        tmp.unlink(missing_ok=True)
        raise VocabError(
            f"Cannot download {url} ({err}); check your connection, or download it yourself "
            f"and pass it with --{option}."
        ) from err
    tmp.replace(dest)
    return dest


def update_vocab(
    out_dir: Path,
    *,
    hgnc: Path | None = None,
    mesh: Path | None = None,
    hgnc_url_: str | None = None,
    mesh_url_: str | None = None,
    gene_info: Path | None = None,
    gene_info_url_: str | None = None,
    supplementary: Path | None = None,
    supplementary_url_: str | None = None,
    with_supplementary: bool = True,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Rebuild the vocabularies into ``out_dir`` from local files or fresh downloads.

    ``hgnc``/``mesh``/``gene_info``/``supplementary`` are local files (HGNC TSV; MeSH descriptor
    XML, plain or gzipped; NCBI Gene's human gene_info, plain or gzipped; MeSH's supplementary
    concept XML, plain or gzipped); whichever is missing is downloaded from its URL (argument >
    environment > default); ``with_supplementary`` False leaves the supplementary concepts out.
    ``say`` is told, for each source, the local file or the URL downloaded.
    """
    if say is not None:
        for label, local, url in (
            ("HGNC", hgnc, hgnc_url(hgnc_url_)),
            ("MeSH", mesh, mesh_url(mesh_url_)),
            ("NCBI Gene", gene_info, gene_info_url(gene_info_url_)),
            *(
                [("MeSH supplementary", supplementary, mesh_supplementary_url(supplementary_url_))]
                if with_supplementary else []
            ),
        ):  # fmt: skip
            say(f"{label}: {local or 'downloading ' + url}")

    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _update_in(
            out_dir, hgnc, mesh, hgnc_url_, mesh_url_, gene_info, gene_info_url_,
            supplementary if with_supplementary else None,
            supplementary_url_ if with_supplementary else "",
        )  # fmt: skip
    except BaseException:
        if created:  # a failed first build (offline, a bad file) leaves no empty folder behind
            shutil.rmtree(out_dir, ignore_errors=True)
        raise


def _local_version(path: Path, pattern: str) -> str:
    """A local file's version: from its name, else its modification date."""
    found = version_from_name(path, pattern)
    if found:
        return found
    when = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d")
    return f"local file of {when}"


def _update_in(
    out_dir: Path,
    hgnc: Path | None,
    mesh: Path | None,
    hgnc_url_: str | None,
    mesh_url_: str | None,
    gene_info: Path | None,
    gene_info_url_: str | None,
    supplementary: Path | None,
    supplementary_url_: str | None,
) -> dict[str, Any]:
    """``supplementary_url_`` "" (and no file): without MeSH's supplementary concepts."""
    import tempfile

    today = datetime.now(UTC).strftime("%Y-%m-%d")
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".download-") as tmp:
        hgnc_source = str(hgnc) if hgnc else hgnc_url(hgnc_url_)
        mesh_source = str(mesh) if mesh else mesh_url(mesh_url_)
        if hgnc is None:
            hgnc = download(hgnc_source, Path(tmp) / "hgnc_complete_set.txt", "hgnc")
            hgnc_version = f"downloaded {today}"
        else:
            hgnc_version = _local_version(hgnc, r"(\d{4}-\d{2}(?:-\d{2})?)")
        if mesh is None:
            name = mesh_source.rstrip("/").rsplit("/", 1)[-1] or "desc.xml"
            mesh = download(mesh_source, Path(tmp) / name, "mesh")
            mesh_version = version_from_name(mesh, r"(\d{4})") or f"downloaded {today}"
        else:
            mesh_version = _local_version(mesh, r"(\d{4})")
        gene_info_source = str(gene_info) if gene_info else gene_info_url(gene_info_url_)
        gene_info_version = (
            _local_version(gene_info, r"(\d{4}-\d{2}(?:-\d{2})?)") if gene_info
            else f"downloaded {today}"
        )  # fmt: skip
        if gene_info is None:
            name = gene_info_source.rstrip("/").rsplit("/", 1)[-1] or "gene_info"
            gene_info = download(gene_info_source, Path(tmp) / name, "gene-info")
        supplementary_source = str(supplementary) if supplementary else None
        supplementary_version = _local_version(supplementary, r"(\d{4})") if supplementary else None
        if supplementary is None and supplementary_url_ != "":
            supplementary_source = mesh_supplementary_url(supplementary_url_)
            name = supplementary_source.rstrip("/").rsplit("/", 1)[-1] or "supp.xml"
            supplementary = download(supplementary_source, Path(tmp) / name, "mesh-supplementary")
            supplementary_version = version_from_name(supplementary, r"(\d{4})") or (
                f"downloaded {today}"
            )
        return build_from_files(
            hgnc,
            out_dir,
            mesh_xml=mesh,
            hgnc_version=hgnc_version,
            mesh_version=mesh_version,
            hgnc_source=hgnc_source,
            mesh_source=mesh_source,
            gene_info=gene_info,
            gene_info_source=gene_info_source,
            gene_info_version=gene_info_version,
            mesh_supplementary=supplementary,
            mesh_supplementary_source=supplementary_source,
            mesh_supplementary_version=supplementary_version,
        )
