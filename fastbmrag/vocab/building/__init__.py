"""Building the vocabulary files from HGNC, MeSH and NCBI Gene (build time only: nothing outside this package imports it)."""
