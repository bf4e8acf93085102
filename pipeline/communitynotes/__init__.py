"""Community Notes from a check: whether to write one, the note itself, and how it would score.

- `drafting`: decide (write / no note needed / not enough evidence, leaning to no note) and
  write the note in the post's language, the specific correction first, the best source first;
- `claimopinion`: factbot's measured ClaimOpinion score of a (post, note) pair, from its own
  stance model and claim detector, in X's High / Medium / Low buckets, and its agreement with
  the API's `claim_opinion_score`;
- `admission`: a writer's standing against X's admission thresholds over its last 50 notes.

Nothing here talks to X: the X adapter (`bots.platforms.x`) submits what these modules write.
"""
