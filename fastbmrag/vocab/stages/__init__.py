"""The normaliser's stages beyond the exact lookups, one file per phenomenon."""
