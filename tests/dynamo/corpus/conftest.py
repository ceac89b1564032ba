"""Fixtures of the compiled-vs-eager corpus (issue 9 "Tests and proof").

Every corpus test takes the library as the fixture ``lib``: ``ember`` by default, or
PyTorch itself with ``CORPUS_LIB=torch``. The same test text runs against both, so the
expected compile and graph-break counts are PyTorch's own numbers, and ember is held to
them.
"""
import importlib
import os
import warnings

import pytest


def _load_lib():
    name = os.environ.get("CORPUS_LIB", "ember")
    if name not in ("ember", "torch"):
        raise ValueError(f"CORPUS_LIB must be 'ember' or 'torch', not {name!r}")
    lib = pytest.importorskip(name) if name == "torch" else importlib.import_module(name)
    # submodules that `import torch` does not load by itself
    for sub in ("_dynamo", "_dynamo.testing", "_dynamo.exc", "compiler"):
        importlib.import_module(f"{name}.{sub}")
    return lib


@pytest.fixture(scope="session")
def lib():
    return _load_lib()


@pytest.fixture(autouse=True)
def _fresh_dynamo(lib):
    """Each program starts with empty compile caches and PyTorch's default config, so
    compile counts do not depend on test order."""
    config = lib._dynamo.config
    saved = {k: getattr(config, k) for k in ("cache_size_limit", "automatic_dynamic_shapes")}
    lib._dynamo.reset()
    with warnings.catch_warnings():
        yield
    for k, v in saved.items():
        setattr(config, k, v)
    lib._dynamo.reset()
    lib.set_default_dtype(lib.float32)
    lib.set_grad_enabled(True)
