"""The `factbot` command line."""
