"""`fastbmrag vocab update|info`: rebuild and inspect the HGNC and MeSH vocabularies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from fastbmrag import config
from fastbmrag.cli.common import json_option, quiet_option


@click.group()
def vocab() -> None:
    """Manage the HGNC and MeSH vocabularies used to normalise names.

    \b
    Example:
      fastbmrag vocab info
      fastbmrag vocab update                     # download current HGNC + MeSH, rebuild
      fastbmrag vocab update --hgnc hgnc_complete_set.txt --mesh desc2025.xml
    """


# Each source of `vocab update`: a local file (--NAME) instead of downloading it (--NAME-url)
SOURCES = (
    ("hgnc", "Local HGNC complete-set TSV", "HGNC", config.ENV_HGNC_URL,
     config.DEFAULT_HGNC_URL),
    ("mesh", "Local MeSH descriptor XML (desc20XX.xml, may be gzipped)", "MeSH",
     config.ENV_MESH_URL, config.DEFAULT_MESH_URL),
    ("gene-info", "Local NCBI Gene Homo_sapiens.gene_info(.gz)", "NCBI Gene's gene_info",
     config.ENV_GENE_INFO_URL, config.DEFAULT_GENE_INFO_URL),
    ("mesh-supplementary", "Local MeSH supplementary concept XML (supp20XX.xml, may be "
     "gzipped)", "MeSH's supplementary concepts", config.ENV_MESH_SUPPLEMENTARY_URL,
     config.DEFAULT_MESH_SUPPLEMENTARY_URL),
)  # fmt: skip


def source_options(f: Any) -> Any:
    """``--NAME`` and ``--NAME-url`` of each of :data:`SOURCES`."""
    for name, local, remote, env, default in reversed(SOURCES):
        f = click.option(f"--{name}-url", default=None,
                         help=f"Where to download {remote} [env {env}, default {default}].")(f)
        f = click.option(f"--{name}", type=click.Path(exists=True, dir_okay=False,
                                                      path_type=Path),
                         default=None, help=f"{local} instead of downloading it.")(f)  # fmt: skip
    return f


@vocab.command()
@source_options
@click.option(
    "--no-mesh-supplementary",
    is_flag=True,
    help="Leave MeSH's supplementary concepts out (PubTator3's chemical C ids then keep no "
    "heading descriptor).",
)
@quiet_option
def update(
    hgnc: Path | None,
    mesh: Path | None,
    hgnc_url: str | None,
    mesh_url: str | None,
    gene_info: Path | None,
    gene_info_url: str | None,
    mesh_supplementary: Path | None,
    mesh_supplementary_url: str | None,
    no_mesh_supplementary: bool,
    quiet: bool,
) -> None:
    """Download the current HGNC, MeSH and NCBI Gene files and rebuild the vocabularies.

    The result goes to <FASTBMRAG_HOME>/vocab/ and is used from then on instead of the
    bundled copy (delete that folder to go back). MeSH's supplementary concepts (a large
    file) map the C ids PubTator3 gives many chemicals to their heading descriptors.

    \b
    Examples:
      fastbmrag vocab update
      fastbmrag vocab update --hgnc hgnc_complete_set.txt --mesh desc2025.xml \\
          --gene-info Homo_sapiens.gene_info.gz
    """
    from fastbmrag import update_vocab, vocab_cache_dir

    out = vocab_cache_dir()
    manifest = update_vocab(
        out,
        hgnc=hgnc,
        mesh=mesh,
        hgnc_url_=hgnc_url,
        mesh_url_=mesh_url,
        gene_info=gene_info,
        gene_info_url_=gene_info_url,
        supplementary=mesh_supplementary,
        supplementary_url_=mesh_supplementary_url,
        with_supplementary=not no_mesh_supplementary,
        say=None if quiet else lambda line: click.echo(line, err=True),
    )
    c = manifest["counts"]
    click.echo(
        f"Vocabularies rebuilt in {out}: {c['genes']} genes (HGNC "
        f"{manifest['sources']['hgnc']['version']}), {c['disease_descriptors']} disease and "
        f"{c['chemical_descriptors']} chemical descriptors (MeSH "
        f"{manifest['sources']['mesh']['version']})"
        + (f", {c['mesh_supplementary']} supplementary concepts." if c.get("mesh_supplementary")
           else ".")
    )  # fmt: skip


@vocab.command()
@json_option
def info(as_json: bool) -> None:
    """Show which vocabularies are in use: versions, sources, counts.

    \b
    Example:
      fastbmrag vocab info --json
    """
    from fastbmrag import vocab_info

    data = vocab_info()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"vocabularies: {data['path']} ({data['origin']}), built {data.get('built', '?')}")
    for key, src in data.get("sources", {}).items():
        click.echo(f"  {key}: {src.get('name', key)}, version {src.get('version')}")
        click.echo(f"      from {src.get('source')}")
    for key, value in data.get("counts", {}).items():
        click.echo(f"  {key}: {value}")
