"""Small utilities: token counts, counted words, whole files, closing resources."""
