"""Finding evidence: web retrieval, local retrieval, relevance, credibility ranking, reachability,
ingest.
"""
