"""Paper readers: papers CSV/TSV, PMC JATS full text, MEDLINE XML, and the common Paper record."""

from fastbmrag.papers.model import Paper

__all__ = ["Paper"]
