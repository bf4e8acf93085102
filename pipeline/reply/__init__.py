"""The correction: writer, citation check, link scrubbing, renderers."""
