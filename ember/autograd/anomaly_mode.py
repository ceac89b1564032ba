"""Anomaly detection: forward tracebacks for backward errors, and a NaN check.

Note: while enabled, every Node records the Python stack of the forward call that
created it (graph.py); a node wrapper on the backward engine (`_check_backward`,
ranked after the profiler's events) prints it (as a warning, like PyTorch) when that
node's backward raises, and with check_nan raises for a backward that returns NaN.
"""
import warnings

import numpy as np

from .._dispatch import RANK_DETERMINISM
from .._tensor import Tensor
from . import engine
from .graph import _ANOMALY

_RANK = RANK_DETERMINISM     # checks sit inside the profiler's events


def _check_backward(node, gin, call):
    try:
        outs = call(gin)
        if _ANOMALY.check_nan:
            for i, g in enumerate(outs):
                if isinstance(g, Tensor) and np.isnan(g._data).any():
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
    except Exception:
        if node._anomaly_trace:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that "
                          f"caused the error:\n{node._anomaly_trace}", stacklevel=2)
        raise
    return outs


def _set(enabled, check_nan):
    """Turn anomaly detection on or off: the flag graph.py reads, and the engine wrapper."""
    was = _ANOMALY.enabled
    _ANOMALY.enabled, _ANOMALY.check_nan = bool(enabled), check_nan
    if _ANOMALY.enabled and not was:
        engine.add_node_wrapper(_RANK, _check_backward)
    elif was and not _ANOMALY.enabled:
        engine.remove_node_wrapper(_check_backward)

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.")


class detect_anomaly:
    """Context manager that turns anomaly detection on inside it."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn(_WARNING, stacklevel=2)

    def __enter__(self):
        self.prev = (_ANOMALY.enabled, _ANOMALY.check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


class set_detect_anomaly:
    """Sets anomaly detection on or off now; as a context manager, restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_ANOMALY.enabled, _ANOMALY.check_nan)
        _set(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


def is_anomaly_enabled():
    return _ANOMALY.enabled


def is_anomaly_check_nan_enabled():
    return _ANOMALY.check_nan
