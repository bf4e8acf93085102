"""The composition root: builds the long-lived services once per process."""
