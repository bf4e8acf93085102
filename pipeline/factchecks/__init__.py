"""Published fact-checks: the operator's index of ClaimReview feeds and matching posts to it."""
