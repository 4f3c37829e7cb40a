"""Word tables and pure text functions that the build and the lookups share."""
