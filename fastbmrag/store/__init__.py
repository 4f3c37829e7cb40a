"""Storage: Qdrant Edge (embedded) or a Qdrant server for edges; SQLite ledger for state."""
