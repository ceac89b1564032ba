"""Anomaly detection: forward tracebacks for backward errors, and a NaN check.

Note: while enabled, every Node records the Python stack of the forward call that
created it; the engine prints it (as a warning, like PyTorch) when that node's
backward raises, and with check_nan raises for a backward that returns NaN.
"""
import warnings

from .graph import _ANOMALY

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
        _ANOMALY.enabled, _ANOMALY.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _ANOMALY.enabled, _ANOMALY.check_nan = self.prev
        return False


class set_detect_anomaly:
    """Sets anomaly detection on or off now; as a context manager, restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_ANOMALY.enabled, _ANOMALY.check_nan)
        _ANOMALY.enabled, _ANOMALY.check_nan = bool(mode), check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _ANOMALY.enabled, _ANOMALY.check_nan = self.prev
        return False


def is_anomaly_enabled():
    return _ANOMALY.enabled


def is_anomaly_check_nan_enabled():
    return _ANOMALY.check_nan
