"""VariableTrackers of the capture (one module per family of Python values)."""
