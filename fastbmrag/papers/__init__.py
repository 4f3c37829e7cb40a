"""Paper readers: papers CSV/TSV, PMC JATS full text, MEDLINE XML, and the common Paper record."""

from fastbmrag.papers.csv_reader import papers_from_frame, read_papers_csv
from fastbmrag.papers.io import expand_inputs, iter_file, iter_papers, write_papers_csv
from fastbmrag.papers.jats import parse_jats, parse_jats_all, read_jats
from fastbmrag.papers.medline import parse_medline
from fastbmrag.papers.model import Paper
from fastbmrag.papers.report import ReadReport

__all__ = [
    "Paper",
    "ReadReport",
    "expand_inputs",
    "iter_file",
    "iter_papers",
    "parse_jats",
    "parse_jats_all",
    "papers_from_frame",
    "parse_medline",
    "read_jats",
    "read_papers_csv",
    "write_papers_csv",
]
