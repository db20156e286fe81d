"""A reference whose import fails."""

raise RuntimeError("cannot load")
