"""The service around the engine: composition root, CLI, settings, HTTP API, dashboard, job
runtime, platform adapters and the proactive monitor (docs/architecture/index.md)."""
