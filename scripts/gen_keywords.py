"""Write ``fastbmrag/keywords.py`` from the declared options, so that the Python API's keyword
arguments are what a type checker follows (``rag.query("...", top_kk=5)`` is an error there):
one ``TypedDict`` per options dataclass, a field per declared field. A list option is written
as a text or a sequence of texts, as the library takes it (:func:`fastbmrag.declared.values_of`).

    python scripts/gen_keywords.py          # write it
    python scripts/gen_keywords.py --check  # exit 1 where it is not current (a test runs this)
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import fields
from pathlib import Path

from fastbmrag.explore.commands import DigestOptions, PathOptions
from fastbmrag.index.options import UpdateOptions
from fastbmrag.query.options import QueryOptions
from fastbmrag.store.admin import ExportOptions

TARGET = Path(__file__).resolve().parents[1] / "fastbmrag" / "keywords.py"
KINDS = {  # the TypedDict of each options dataclass
    "QueryKeywords": QueryOptions,
    "UpdateKeywords": UpdateOptions,
    "ExportKeywords": ExportOptions,
    "PathKeywords": PathOptions,
    "DigestKeywords": DigestOptions,
}
# fields an operation takes as its own parameters, not as keywords (export's format)
POSITIONAL = {"ExportKeywords": ("fmt",)}
HEAD = '''"""The Python API's keyword arguments as a type checker sees them: one ``TypedDict`` per
declared options dataclass (:mod:`fastbmrag.declared`). Written by ``scripts/gen_keywords.py``
from the declarations; a test holds it to them. Do not edit by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict
'''


def annotation(kind: str) -> str:
    """A field's annotation as a keyword takes it: a tuple of texts as a text or a sequence."""
    if kind.startswith("tuple[str"):
        return "str | Sequence[str]"
    return kind


def rendered() -> str:
    parts = [HEAD]
    for name, options in KINDS.items():
        parts.append(f"\n\nclass {name}(TypedDict, total=False):")
        parts.append(f'    """:class:`~{options.__module__}.{options.__name__}`\'s fields."""\n')
        for f in fields(options):
            if f.name in POSITIONAL.get(name, ()):
                continue
            parts.append(f"    {f.name}: {annotation(str(f.type))}")
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(parts) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = rendered()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is not current: run python scripts/gen_keywords.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
