"""Compiler backends of ember.compile: the registry and the built-in backends.

A backend is `backend(gm: ember.fx.GraphModule, example_inputs: list[Tensor]) -> callable`;
`ember.compile(backend="name")` looks the name up in `registry`.
"""
