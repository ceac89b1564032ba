"""ember._logging (torch._logging): which compiler logs print, set by name.

    EMBER_LOGS="+dynamo,graph_breaks,recompiles" python train.py      (or TORCH_LOGS=...)
    ember._logging.set_logs(dynamo=logging.DEBUG, guards=True)

Why a module of its own: the capture, the backends and the code generator each log through
`getArtifactLogger(__name__, "<artifact>")` and never decide themselves whether to print.
Importing it reads the environment once and installs the stderr handlers; it is imported by
ember.compile, not by `import ember`, so plain eager programs pay nothing. The output
format is described in ember/_logging/_internal.py.
"""
import logging

from . import _registrations  # noqa: F401  (the names settings may use)
from ._internal import (DEFAULT_LOG_LEVEL, LazyString, _init_logs, get_loggers,
                        getArtifactLogger, register_artifact, register_log, set_logs,
                        warning_once)

__all__ = ["set_logs", "getArtifactLogger", "LazyString", "warning_once", "DEFAULT_LOGGING",
           "get_loggers", "register_log", "register_artifact", "DEFAULT_LOG_LEVEL"]

# torch._logging.DEFAULT_LOGGING: set_logs(**DEFAULT_LOGGING) for a useful overview
DEFAULT_LOGGING = {
    "dynamo": logging.INFO,
    "aot": logging.INFO,
    "inductor": logging.INFO,
    "fsdp": logging.INFO,
    "ddp_graphs": True,
    "graph_breaks": True,
    "side_effects": True,
    "guards": True,
    "recompiles": True,
    "dynamic": logging.INFO,
}

_init_logs()
