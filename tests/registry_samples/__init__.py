"""Per-family sample tables for tests/test_registry.py, merged here."""
import importlib
import pkgutil

SAMPLES, NON_DIFFERENTIABLE, NO_GRADCHECK = {}, set(), {}

for _m in pkgutil.iter_modules(__path__):
    if _m.name.startswith("_"):
        continue
    _mod = importlib.import_module(f"{__name__}.{_m.name}")
    for _k in getattr(_mod, "SAMPLES", {}):
        if _k in SAMPLES:
            raise RuntimeError(f"registry sample for '{_k}' defined twice ({_m.name})")
    SAMPLES.update(getattr(_mod, "SAMPLES", {}))
    NON_DIFFERENTIABLE |= set(getattr(_mod, "NON_DIFFERENTIABLE", ()))
    NO_GRADCHECK.update(getattr(_mod, "NO_GRADCHECK", {}))
