"""Publisher credibility: domains, the source policy and rating-table importers."""
