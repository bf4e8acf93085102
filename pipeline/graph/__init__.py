"""RAV's graph verification: typed claim/evidence graphs (build), values (dates, numbers),
places (gazetteer) and the matching, conflicts and edge verification (verify)."""
