"""Web search providers behind one interface, merged, de-duplicated and cached."""
