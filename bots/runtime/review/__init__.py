"""The human review queue: proposals a person approves, edits or rejects, and their cards."""
