"""The HTTP API: the first adapter."""
