"""The service: CLI, settings, HTTP API; later the platform adapters and scheduler."""
