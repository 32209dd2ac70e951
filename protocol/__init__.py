"""Protocol v1: the wire format, its schemas and its written specification (SPEC.md)."""
