"""The drug-induced form of a condition: its drug-induced descriptor when the name says
"X-induced" or the sentence of the context that names it speaks of a drug's effects
("hepatitis" -> Chemical and Drug Induced Liver Injury)."""

from __future__ import annotations

from fastbmrag.vocab.context import (
    Context,
)
from fastbmrag.vocab.rules.language import (
    OTHER_CAUSES,
    condition_key,
    name_forms,
)
from fastbmrag.vocab.vocabulary import Vocabulary


def induced_form(v: Vocabulary, clean: str, ctx: Context | None, item: int = -1) -> int | None:
    """The drug-induced descriptor of a condition named in a sentence about a drug's effects
    ("hepatitis" -> Chemical and Drug Induced Liver Injury), or written as induced by a
    named substance ("levodopa-induced dyskinesia" -> Dyskinesia, Drug-Induced)."""
    if not v.drug_induced:
        return None
    if ctx is None and "induced" not in clean.lower():
        return None  # not said to be induced, and no sentence to say it
    written = clean
    if ctx is not None and clean in ctx.windows:
        clean = ctx.abbreviations.get(clean, clean)
    if not OTHER_CAUSES.isdisjoint(name_forms(clean)[1]):
        return None
    key, induced = condition_key(clean)
    found = v.drug_induced.get(key)
    if found is None and item >= 0:
        # The condition as found ("dyskinetic" -> Dyskinesias, "hepatic injury" -> Liver
        # Diseases): the drug-induced form of that descriptor's own name.
        found = v.drug_induced.get(condition_key(v.descriptor(item).name)[0])
        if found is None:
            found = v.induced_child.get(item)
    if found is None or induced or (ctx is not None and ctx.drug_cause(written, clean)):
        return found
    return None  # neither said to be induced nor in a sentence about a drug's effects
