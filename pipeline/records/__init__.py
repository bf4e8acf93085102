"""The engine's records: a check's domain records, its image report and its search status.

`domain` holds the frozen records a check is made of (posts, claims, evidence, verdicts,
corrections); `image` the image stage's records; `search_status` what sources a check reached.
`domain` imports the other two, never the reverse.
"""
