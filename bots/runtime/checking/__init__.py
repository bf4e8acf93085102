"""Check requests: the one way in, check jobs, the reuse index and directly given images."""
