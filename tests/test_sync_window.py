"""The sync window and last-sync mark, with a real ledger and the fake E-utilities server.

The indexing step is a plain function passed in (as `sync_collection` takes it), so these
tests need no model server; tests/test_sync.py runs the whole thing with the real indexer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from fastbmrag.errors import InputError
from fastbmrag.papers.eutils import FetchSettings
from fastbmrag.papers.model import Paper
from fastbmrag.papers.sync import DEFAULT_SYNC_DAYS, DoneSet, sync_collection, sync_window
from fastbmrag.store.collection import Collection
from fastbmrag.testing.fake_eutils import FakeEutils

EUTILS = Path(__file__).parent / "data" / "eutils"
TODAY = date(2020, 12, 13)
Q = "cancer[tiab]"


@dataclass
class Indexed:
    """What the indexer reports (the fields sync reads from a RunSummary)."""

    indexed: int = 0
    failed: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def line(self) -> str:
        return f"{self.indexed} indexed, {self.failed} failed"

    def to_dict(self) -> dict[str, Any]:
        return {"indexed": self.indexed, "failed": self.failed}


class Indexer:
    """Marks papers done in the ledger (as the real indexer does), failing the ids in ``fail``."""

    def __init__(self, coll: Collection, fail: set[str] | None = None) -> None:
        self.coll = coll
        self.fail = fail or set()
        self.seen: list[list[str]] = []

    def __call__(self, papers: list[Paper]) -> Indexed:
        self.seen.append([p.paper_id for p in papers])
        out = Indexed()
        for p in papers:
            if p.paper_id in self.fail:
                self.coll.ledger.mark_failed(p.paper_id, p.content_hash(), "model error")
                out.failed += 1
                out.failures.append((p.paper_id, "model error"))
            else:
                self.coll.commit_paper(p.paper_id, p.content_hash(), [], [])
                out.indexed += 1
        return out


@pytest.fixture
def fake() -> Iterator[FakeEutils]:
    with FakeEutils(EUTILS / "pubmed21n1298_slice.xml", EUTILS / "PMC2774577.nxml") as server:
        yield server


@pytest.fixture
def coll(tmp_path: Path) -> Iterator[Collection]:
    with Collection.writer(tmp_path / "wd", "c", create=True) as c:
        yield c


def settings(fake: FakeEutils) -> FetchSettings:
    return FetchSettings.resolve(
        email="a@example.org",
        api_key="k",
        eutils_url=fake.url,
        fulltext_url=fake.fulltext_url,
        backoff=0.0,
    )


def test_window_first_run_default_and_overrides(coll: Collection) -> None:
    assert sync_window(coll, Q, today=TODAY) == (
        TODAY - timedelta(days=DEFAULT_SYNC_DAYS),
        TODAY,
        None,
    )
    assert sync_window(coll, Q, days=3, today=TODAY) == (date(2020, 12, 10), TODAY, None)
    assert sync_window(coll, Q, since=date(2020, 1, 2), today=TODAY)[0] == date(2020, 1, 2)


def test_window_after_a_mark_has_one_day_of_overlap(coll: Collection) -> None:
    coll.ledger.syncs.set(Q, "2020-12-10")
    assert sync_window(coll, Q, today=TODAY) == (date(2020, 12, 9), TODAY, "2020-12-10")
    # another query of the same collection has its own mark
    assert sync_window(coll, "other", today=TODAY)[2] is None
    coll.ledger.syncs.set(Q, "2020-12-10", retry_from="2020-11-01")
    assert sync_window(coll, Q, today=TODAY)[0] == date(2020, 11, 1)
    coll.ledger.syncs.set(Q, "10/12/2020")
    with pytest.raises(InputError, match="pass since to choose the window"):
        sync_window(coll, Q, today=TODAY)


def test_done_set_reads_the_ledger(coll: Collection) -> None:
    coll.commit_paper("123", None, [], [])
    coll.ledger.mark_failed("456", None, "boom")
    done = DoneSet(coll)
    assert "123" in done
    assert "456" not in done and "789" not in done and "" not in done


def test_sync_moves_the_mark_on_success_only(fake: FakeEutils, coll: Collection) -> None:
    indexer = Indexer(coll, fail={"33169800"})
    first = sync_collection(coll, Q, settings(fake), indexer, since=date(2020, 11, 1), today=TODAY)
    assert sorted(indexer.seen[0]) == ["33155662", "33169800"]
    assert first.exit_code == 1 and not first.mark_moved
    state = coll.ledger.syncs.get(Q)
    assert state is not None
    assert (state.last_date, state.info["retry_from"]) == ("", "2020-11-01")

    indexer.fail.clear()
    fake.reset_counts()
    second = sync_collection(coll, Q, settings(fake), indexer, today=TODAY)
    assert (second.mindate, second.maxdate) == (date(2020, 11, 1), TODAY)
    assert indexer.seen[1] == ["33169800"]
    assert fake.efetched_ids() == ["33169800"]
    assert second.exit_code == 0 and second.mark_moved
    state = coll.ledger.syncs.get(Q)
    assert state is not None
    assert state.last_date == "2020-12-13"
    assert "retry_from" not in state.info
    assert state.info["indexed"] == 1

    # the next day: window 12-12..12-14, 33316284 (entered 12-14) is new
    third = sync_collection(coll, Q, settings(fake), indexer, today=TODAY + timedelta(days=1))
    assert third.mindate == date(2020, 12, 12)
    assert indexer.seen[2] == ["33316284"]
    assert "last-sync mark now 2020-12-14" in third.line()


def test_nothing_new_does_not_call_the_indexer(fake: FakeEutils, coll: Collection) -> None:
    indexer = Indexer(coll)
    result = sync_collection(coll, Q, settings(fake), indexer, days=2, today=date(2024, 1, 1))
    assert indexer.seen == []
    assert result.index is None and result.exit_code == 0 and result.mark_moved
    assert "nothing new to index" in result.line()
    assert fake.count("efetch") == 0


def test_full_text_failure_keeps_the_mark(fake: FakeEutils, coll: Collection) -> None:
    coll.ledger.syncs.set(Q, "2008-06-29")
    fake.fail("fulltext", 503, times=10)
    indexer = Indexer(coll)
    s = FetchSettings.resolve(
        email="a@example.org",
        api_key="k",
        eutils_url=fake.url,
        fulltext_url=fake.fulltext_url,
        backoff=0.0,
        max_tries=2,
    )
    result = sync_collection(coll, Q, s, indexer, today=date(2008, 7, 1))
    assert list(result.fetch.failed) == ["19920991"]
    assert indexer.seen == []  # the only new paper could not be fetched whole
    assert result.exit_code == 1 and not result.mark_moved
    state = coll.ledger.syncs.get(Q)
    assert state is not None
    assert (state.last_date, state.info["retry_from"]) == ("2008-06-29", "2008-06-28")


def test_dry_run_writes_nothing(fake: FakeEutils, coll: Collection) -> None:
    indexer = Indexer(coll)
    result = sync_collection(
        coll, Q, settings(fake), lambda papers: Indexed(), since=date(2020, 1, 1), dry_run=True
    )
    assert result.fetch.fetched == 4
    assert coll.ledger.syncs.get(Q) is None
    assert indexer.seen == []
    assert "dry run" in result.line()


def test_empty_query_is_an_input_error(fake: FakeEutils, coll: Collection) -> None:
    with pytest.raises(InputError, match="query is empty"):
        sync_collection(coll, "  ", settings(fake), Indexer(coll))
    assert fake.requests == []
