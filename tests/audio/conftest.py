"""torchaudio as the oracle: its wheel's C extension does not load with torch 2.13, but its
pure-Python functional/transforms/models do. `make setup` (or the command below) installs it
with --no-deps into .venv/torchaudio-oracle without the .so files; tests that need it skip
when that directory is absent.

    .venv/bin/python -m pip install --no-deps --target .venv/torchaudio-oracle \
        torchaudio==2.11.0 && rm -f .venv/torchaudio-oracle/torchaudio/lib/*.so
"""
import os
import sys

import pytest

_ORACLE = os.environ.get("EMBER_TORCHAUDIO_ORACLE", os.path.join(
    os.path.dirname(__file__), "..", "..", ".venv", "torchaudio-oracle"))


@pytest.fixture(scope="session")
def ta():
    """The torchaudio package (pure-Python parts), or skip."""
    if not os.path.isdir(os.path.join(_ORACLE, "torchaudio")):
        pytest.skip(f"torchaudio oracle not installed in {_ORACLE}")
    lib = os.path.join(_ORACLE, "torchaudio", "lib")
    if os.path.isdir(lib) and any(f.endswith(".so") for f in os.listdir(lib)):
        pytest.skip("torchaudio oracle still has its C extension (remove lib/*.so)")
    if _ORACLE not in sys.path:
        sys.path.append(_ORACLE)
    try:
        import torchaudio
        import torchaudio.functional  # noqa: F401
        import torchaudio.models  # noqa: F401
        import torchaudio.transforms  # noqa: F401
    except Exception as e:          # a broken oracle is a skip, not an ember failure
        pytest.skip(f"torchaudio oracle does not import: {e!r}")
    return torchaudio
