"""Ahead-of-time C generation for ember.export.aot_compile (a library with no Python in it)."""
