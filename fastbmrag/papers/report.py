"""What a read of papers did: how many were read, which were skipped and why, what was repaired.

Every reader takes an optional :class:`ReadReport`; passing the same report to several
readers (as :func:`fastbmrag.papers.io.iter_papers` does) also catches a ``paper_id`` that
appears in more than one input. Nothing is skipped or repaired silently: each event is
recorded here and logged.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fastbmrag.papers.model import Paper
from fastbmrag.util.wording import printable

log = logging.getLogger("fastbmrag.papers")

# Skip reasons (the categories the summary counts).
EMPTY = "empty abstract and main text"
DUPLICATE = "duplicate paper_id"
NO_PAPER_ID = "empty paper_id"
UNREADABLE = "unreadable file"
RETRACTION_NOTICE = "a retraction notice, not a paper"
TOO_LARGE = "cell too large"
NO_INPUT = "input not found"
UNBALANCED_QUOTE = "unbalanced quote"

# Repair categories (the paper was kept).
MALFORMED_LIST = "main_text not a valid list literal, read as plain text"
BAD_YEAR = "year not a whole number from 1800 to 2100, left empty"
BAD_WEIGHT = "weight not a number, left empty"
BAD_PMID = "pmid not a PubMed id (digits), left empty"
RAGGED_ROW = "row length differs from the header"
NO_ABSTRACT = "no abstract"
OLDER_VERSION = "another version of a PMID the input holds"
CONTROL_CHARACTERS = "control characters removed"
UNKNOWN_DESIGN = "design not a known study design, left out"
UNKNOWN_ORGANISM = "organism not a known organism, left out"
SHOWN_DETAILS = 5  # values a summary names, of those it repaired


# Skips that are no defect of the input: a MEDLINE citation with no abstract (a third of a
# baseline file), a retraction notice, another version of a PMID.
ROUTINE = (NO_ABSTRACT, RETRACTION_NOTICE, OLDER_VERSION)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n:,} {word}s"


@dataclass
class ReadReport:
    """Counts and details of one read; ``summary()`` gives the one-line account.

    ``skipped`` holds ``(where, why)`` pairs, e.g. ``("papers.csv row 12 (paper_id X)",
    "duplicate paper_id")`` or ``("broken.xml", "unreadable file: ...")``.
    ``duplicates`` lists the paper_ids that were dropped as repeats (first one kept),
    ``decode_errors`` the places where undecodable bytes were replaced by U+FFFD,
    ``repaired`` the ``(where, what)`` of values that were fixed up but kept, and
    ``deleted`` the PMIDs a MEDLINE file lists as deleted citations. With ``deletions``
    the MEDLINE reader also yields each of them as a ``Paper(deleted=True)`` (for ``update``,
    which removes their edges).
    """

    deletions: bool = False
    logged: bool = True  # False: a second pass over an input whose first pass logged it

    read: int = 0
    files: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    decode_errors: list[str] = field(default_factory=list)
    repaired: list[tuple[str, str]] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # the values repaired, named
    deleted: list[str] = field(default_factory=list)
    # MEDLINE: PMID -> the latest version this read saw; ``latest``: those of a first pass over
    # the same input, whose older versions this read skips
    versions: dict[str, int] = field(default_factory=dict)
    latest: dict[str, int] = field(default_factory=dict)
    # a read without ``latest``: PMID -> where the latest version seen so far stands
    version_at: dict[str, str] = field(default_factory=dict, repr=False)
    _skip_counts: Counter[str] = field(default_factory=Counter, repr=False)
    _repair_counts: Counter[str] = field(default_factory=Counter, repr=False)
    _seen: set[str] = field(default_factory=set, repr=False)

    def skip(self, where: str, reason: str, detail: str = "") -> None:
        """Record (and log) that the paper or file at ``where`` was left out."""
        why = printable(f"{reason}: {detail}" if detail else reason)
        where = printable(where)  # a file's name may hold an escape sequence
        self.skipped.append((where, why))
        self._skip_counts[reason] += 1
        if self.logged:
            log.info("skipped %s: %s", where, why)

    def repair(self, where: str, what: str, count: int = 1, detail: str = "") -> None:
        """Record (and log) a value that was fixed up (``count``: of the things ``what`` names,
        control characters removed ...); the paper itself is kept. ``detail``: the value and
        the paper, in words the summary shows ("design 'banana' (... paper_id b1) is no known
        study design")."""
        where = printable(where)
        self.repaired.append((where, what))
        self._repair_counts[what] += count
        if detail:
            self.details.append(printable(detail))
        if self.logged:
            log.info("%s: %s", where, printable(detail) or what)

    def decode_error(self, where: str) -> None:
        where = printable(where)
        self.decode_errors.append(where)
        if self.logged:
            log.info("%s: undecodable bytes replaced with U+FFFD (save the file as UTF-8)", where)

    def admit(self, paper: Paper, where: str) -> bool:
        """The one gate every reader passes a paper through before yielding it.

        Rejects (and records) a paper without paper_id, without any text, or with a
        paper_id seen before in this report; otherwise counts it as read.
        """
        label = f"{where} (paper_id {paper.paper_id})" if paper.paper_id else where
        if not paper.paper_id.strip():
            self.skip(where, NO_PAPER_ID)
            return False
        if paper.retraction == "notice":
            self.skip(label, RETRACTION_NOTICE)
            return False
        if not paper.abstract.strip() and not paper.has_main_text:
            self.skip(label, EMPTY)
            return False
        if paper.paper_id in self._seen:
            self.duplicates.append(paper.paper_id)
            self.skip(label, DUPLICATE)
            return False
        self._seen.add(paper.paper_id)
        self.read += 1
        return True

    @property
    def unusable(self) -> list[tuple[str, str]]:
        """The skips that are defects of the input (``--strict`` counts them), errors of whole
        files first: unreadable or truncated files, then rows and records."""
        bad = [(w, why) for w, why in self.skipped if not why.startswith(ROUTINE)]
        return sorted(bad, key=lambda s: not s[1].startswith(UNREADABLE))

    def to_dict(self) -> dict[str, Any]:
        """What the read did, for ``--json``: counts by reason, the files that were unreadable."""
        return {
            "read": self.read,
            "skipped": dict(self._skip_counts.most_common()),
            "unusable": len(self.unusable),
            "unreadable_files": [w for w, why in self.skipped if why.startswith(UNREADABLE)],
            "repaired": dict(self._repair_counts.most_common()),
            "deleted": len(self.deleted),
        }

    def summary(self) -> str:
        """One line, e.g. ``read 120 papers; skipped 3 (2 empty abstract and main text, 1 duplicate paper_id)``."""
        parts = [f"read {_plural(self.read, 'paper')}"]
        if self.skipped:
            why = ", ".join(f"{n:,} {reason}" for reason, n in self._skip_counts.most_common())
            parts.append(f"skipped {len(self.skipped):,} ({why})")
        if self.repaired:
            what = ", ".join(f"{n:,} {r}" for r, n in self._repair_counts.most_common())
            parts.append(f"repaired {len(self.repaired):,} ({what})")
            shown = self.details[:SHOWN_DETAILS]
            more = len(self.details) - len(shown)
            parts += [*shown, *([f"and {more:,} more such values"] if more else [])]
        if self.decode_errors:
            parts.append(
                f"replaced undecodable bytes on {_plural(len(self.decode_errors), 'line')}"
                " (save the file as UTF-8)"
            )
        if self.deleted:
            parts.append(f"listed {_plural(len(self.deleted), 'deleted citation')}")
        return "; ".join(parts)
