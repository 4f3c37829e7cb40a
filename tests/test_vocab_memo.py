"""How the normaliser keeps its speed: tables the garbage collector need not walk, memos that
hold no reference cycle, per-word memos that give the same answers as the rules they cache."""

from __future__ import annotations

import gc
import json
import shutil
import weakref
from pathlib import Path

import pytest

from fastbmrag.errors import VocabError
from fastbmrag.vocab import DictionaryNormalizer, load_normalizer
from fastbmrag.vocab.disk import DiskMap
from fastbmrag.vocab.layout import FORMAT_VERSION
from fastbmrag.vocab.loading import BUNDLED_DIR
from fastbmrag.vocab.normalizer import clear_caches
from fastbmrag.vocab.rules.keys import COMPLETION_HEADS, token_form_tuples, token_forms
from fastbmrag.vocab.rules.language import VARIANT_SUFFIXES, suffix_variants


@pytest.fixture(scope="module")
def norm() -> DictionaryNormalizer:
    return load_normalizer()


def test_bundled_tables_are_not_tracked_by_the_garbage_collector(
    norm: DictionaryNormalizer,
) -> None:
    # Tuples of strings and ints drop out of the collector's tracking; lists never do.
    assert norm.desc[0] == ("D000001", "Calcimycin", "D")
    assert norm.genes[0][:2] == ("HGNC:5", "A1BG")
    row = norm.desc[0]
    gc.collect()
    assert not gc.is_tracked(row)
    # Code tables hold ints only (a code list is ~p, its position in "multi"), so that a
    # loaded dict is never tracked, not even right after loading; the large ones are opened,
    # not loaded: nothing of theirs is in memory for the collector to walk.
    fresh = DictionaryNormalizer.from_dir(BUNDLED_DIR)
    for table in (fresh.gene_index, fresh.mesh_index, fresh.mesh_bag, fresh.superset):
        assert isinstance(table, DiskMap)
        assert all(isinstance(v, int) for v in table.values())
    assert not gc.is_tracked(fresh.mesh_exact) and not gc.is_tracked(fresh.completions)
    # "amphetamine" folds Amphetamine and Amphetamines together; the written number decides.
    packed = fresh.mesh_index["amphetamine"]
    assert isinstance(packed, int) and packed < 0
    codes = fresh.mesh_multi[~packed]
    assert [fresh.desc[c // 2][0] for c in codes] == ["D000661", "D000662"]
    assert fresh.normalize("amphetamines", "chemical").ontology_id == "D000662"
    assert fresh.normalize("Amphetamine", "chemical").ontology_id == "D000661"


def test_a_dropped_normaliser_is_freed_without_the_cycle_collector() -> None:
    fresh = DictionaryNormalizer.from_dir(BUNDLED_DIR)
    assert fresh.normalize("IL-1β", "gene").ontology_id == "HGNC:5992"  # fills the memos
    ref = weakref.ref(fresh)
    gc.disable()
    try:
        del fresh
        assert ref() is None
    finally:
        gc.enable()


def test_bag_words_cover_every_bag_key(norm: DictionaryNormalizer) -> None:
    assert {"endometriosis", "breast", "neoplasm"} <= norm.bag_words
    assert all(norm.bag_words.issuperset(key.split()) for key in norm.mesh_bag)
    assert "endometriomas" not in norm.bag_words  # words are folded, as keys are


def test_suffix_variants_keep_rule_order() -> None:
    clear_caches()
    for word in ("epileptic", "hypotensive", "bruising", "thrombi", "blind", "anginal", "ab"):
        expected = tuple(
            word[: len(word) - len(old)] + new
            for old, new in VARIANT_SUFFIXES
            if word.endswith(old) and len(word) - len(old) >= 2
        )
        assert suffix_variants(word, 2) == expected
    assert suffix_variants("epileptic", 3)[:2] == ("epilepsy", "epilepsis")
    assert suffix_variants("blind", 2) == ("blindness",)


def test_token_form_tuples_match_token_forms() -> None:
    for text in ("Non-Hodgkin's Lymphomas", "IL-1β", "anaemias", "Sulphates", "", "Ödema"):
        plain, toks = token_forms(text)
        assert token_form_tuples(text) == (tuple(plain), tuple(toks))
    assert token_form_tuples("Tumour of the Breasts") == (
        ("tumor", "of", "the", "breasts"),
        ("tumor", "of", "the", "breast"),
    )


def test_head_completion_tables(norm: DictionaryNormalizer) -> None:
    # "hepatorenal" + syndrome is a MeSH term (Hepatorenal Syndrome); + disease is not.
    mask = norm.completions["hepatorenal"]
    assert [h for bit, h in enumerate(COMPLETION_HEADS) if mask >> bit & 1] == ["syndrome"]
    assert norm.normalize("parkinson", "disease").ontology_id == "D010300"  # Parkinson Disease


def test_files_of_another_format_are_refused(tmp_path: Path) -> None:
    shutil.copy(BUNDLED_DIR / "vocab.sqlite", tmp_path / "vocab.sqlite")
    manifest = json.loads((BUNDLED_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["format"] == FORMAT_VERSION == 3
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "format": 4}))
    with pytest.raises(VocabError, match="built by a newer fastbmrag"):
        DictionaryNormalizer.from_dir(tmp_path)
    # an older layout is not patched at load: rebuilt by `vocab update`
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "format": 2}))
    with pytest.raises(VocabError, match="built by an older fastbmrag.*fastbmrag vocab update"):
        DictionaryNormalizer.from_dir(tmp_path)


def test_vocabularies_an_earlier_version_built_still_load(tmp_path: Path) -> None:
    """A user's cache rebuilt by an earlier version (whole pickles, no table file) loads, read
    whole, and answers as the opened tables do."""
    import gzip
    import pickle

    from fastbmrag.vocab.disk import DiskMap, DiskRows, open_tables

    parts, _derived = open_tables(BUNDLED_DIR / "vocab.sqlite")
    for part in ("genes", "mesh"):
        whole = {
            k: dict(v.items()) if isinstance(v, DiskMap) else tuple(v) if isinstance(v, DiskRows)
            else v
            for k, v in parts[part].items()
        }  # fmt: skip
        (tmp_path / f"{part}.pickle.gz").write_bytes(gzip.compress(pickle.dumps(whole, 4)))
    manifest = json.loads((BUNDLED_DIR / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"] = {"genes": "genes.pickle.gz", "mesh": "mesh.pickle.gz"}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    old = DictionaryNormalizer.from_dir(tmp_path)
    opened = DictionaryNormalizer.from_dir(BUNDLED_DIR)
    assert isinstance(old.gene_index, dict) and isinstance(opened.gene_index, DiskMap)
    for name, kind in [("IL-1β", "gene"), ("endometriosis", "disease"), ("cisplatin", "chemical"),
                       ("Alzheimers diseas", "disease"), ("matrix metalloproteinases", "gene")]:
        a, b = old.normalize(name, kind), opened.normalize(name, kind)
        assert (a.ontology_id, a.name, a.matched_by) == (b.ontology_id, b.name, b.matched_by)
    assert old.label("HGNC:5992") == opened.label("HGNC:5992") == "IL1B (interleukin 1 beta)"
