"""Counts in the words a reader expects."""

from fastbmrag.util.wording import counted


def test_one_is_singular_and_other_counts_plural() -> None:
    assert counted(1, "edge") == "1 edge"
    assert counted(0, "edge") == "0 edges"
    assert counted(12_345, "paper") == "12,345 papers"
    assert counted(1, "entity", "entities") == "1 entity"
    assert counted(2, "entity", "entities") == "2 entities"
