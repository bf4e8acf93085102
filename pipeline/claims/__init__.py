"""Claims and queries: heuristic and model decomposition, grounding, search queries."""
