"""What the model reads and cites: numbered sentences with their offsets, and the citation markers it writes."""
