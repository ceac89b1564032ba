"""The machinery of ember._logging (torch._logging._internal): registry, settings, output.

Why: one switchboard decides which of the compiler's loggers print. A *log* is a component
("dynamo" -> the loggers under `ember._dynamo`) with a level; an *artifact* is one kind of
message ("guards", "graph_breaks", ...) that prints only when turned on by name, or, unless
it is off by default, when its component is at DEBUG. Settings come from the environment
(EMBER_LOGS, else TORCH_LOGS; read when ember._logging is imported) or from set_logs().

Loggers are plain `logging.Logger`s: a component logger is named after its module
(`ember._dynamo.guards`); an artifact logger is `<module>.__<artifact>` and code emits on it
at DEBUG (`guards_log.debug("%s", guards)`); `isEnabledFor` is the cheap "is it on" test.

Output goes to stderr in glog's layout, as PyTorch's:

    V1124 22:40:08.123456 4242 ember/_dynamo/guards.py:87] [__guards] GUARDS:

level letter (V=DEBUG, I=INFO, W=WARNING, E=ERROR, C=CRITICAL), month+day, time with
microseconds, process id, the file relative to sys.path and its line, then the artifact's
name; every line of a multi-line message carries the prefix. EMBER_LOGS_FORMAT (or
TORCH_LOGS_FORMAT) replaces it with a logging format string ("short" = logging's basic
format); EMBER_LOGS_OUT (or TORCH_LOGS_OUT) also writes the logs to that file.
PyTorch's "[rank0]:" prefix and trace ids are not printed. Unlike PyTorch's handler, ours
writes to sys.stderr as it is at each line, so pytest's capsys and redirect_stderr see it.
"""
import functools
import importlib.util
import itertools
import logging
import os
import pathlib
import re
import sys
from weakref import WeakSet

log = logging.getLogger(__name__)

DEFAULT_LOG_LEVEL = logging.WARNING
# EMBER_* wins where both are set: TORCH_LOGS may be meant for a torch program run alongside
LOG_ENV_VARS = ("EMBER_LOGS", "TORCH_LOGS")
LOG_OUT_ENV_VARS = ("EMBER_LOGS_OUT", "TORCH_LOGS_OUT")
LOG_FORMAT_ENV_VARS = ("EMBER_LOGS_FORMAT", "TORCH_LOGS_FORMAT")
# the package whose logger is the root of every registered log ("all" in settings)
ROOT = "ember"


def _env(names):
    """(name, value) of the first of `names` set in the environment, else (None, None)."""
    for name in names:
        value = os.environ.get(name)
        if value is not None:
            return name, value
    return None, None


class LogRegistry:
    """Every log alias and artifact name the settings may use."""

    def __init__(self):
        self.log_alias_to_log_qnames = {}      # "dynamo" -> ["ember._dynamo", ...]
        self.artifact_log_qnames = set()       # "ember._dynamo.guards.__guards", ...
        self.child_log_qnames = set()          # modules named in settings under a log
        self.artifact_names = set()
        self.visible_artifacts = set()
        self.artifact_descriptions = {}
        self.off_by_default_artifact_names = set()
        self.artifact_log_formatters = {}

    def is_artifact(self, name):
        return name in self.artifact_names

    def is_log(self, alias):
        return alias in self.log_alias_to_log_qnames

    def register_log(self, alias, log_qnames):
        if isinstance(log_qnames, str):
            log_qnames = [log_qnames]
        self.log_alias_to_log_qnames[alias] = list(log_qnames)

    def register_artifact_name(self, name, description, visible, off_by_default, log_format):
        self.artifact_names.add(name)
        if visible:
            self.visible_artifacts.add(name)
        self.artifact_descriptions[name] = description
        if off_by_default:
            self.off_by_default_artifact_names.add(name)
        if log_format is not None:
            self.artifact_log_formatters[name] = logging.Formatter(log_format)

    def register_artifact_log(self, artifact_log_qname):
        self.artifact_log_qnames.add(artifact_log_qname)

    def register_child_log(self, log_qname):
        self.child_log_qnames.add(log_qname)

    def get_log_qnames(self):
        return set(itertools.chain.from_iterable(self.log_alias_to_log_qnames.values()))

    def is_off_by_default(self, artifact_name):
        return artifact_name in self.off_by_default_artifact_names


class LogState:
    """What the user asked for: levels of logs (by qualified name) and artifacts on."""

    def __init__(self):
        self.log_qname_to_level = {}
        self.artifact_names = set()

    def enable_artifact(self, artifact_name):
        self.artifact_names.add(artifact_name)

    def is_artifact_enabled(self, name):
        return name in self.artifact_names

    def enable_log(self, log_qnames, log_level):
        if isinstance(log_qnames, str):
            log_qnames = [log_qnames]
        for log_qname in log_qnames:
            self.log_qname_to_level[log_qname] = log_level

    def get_log_level_pairs(self):
        return self.log_qname_to_level.items()

    def clear(self):
        self.log_qname_to_level.clear()
        self.artifact_names.clear()


log_registry = LogRegistry()
log_state = LogState()


def register_log(setting_name, log_name):
    """Let settings control the logger(s) `log_name` under the short name `setting_name`."""
    log_registry.register_log(setting_name, log_name)


def register_artifact(setting_name, description, visible=False, off_by_default=False,
                      log_format=None):
    """Declare an artifact. `visible`: listed by EMBER_LOGS=help; `off_by_default`: not
    printed when its component is at DEBUG, only when named."""
    log_registry.register_artifact_name(setting_name, description, visible, off_by_default,
                                        log_format)


def getArtifactLogger(module_qname, artifact_name):
    """The logger of one artifact in one module: emits (at DEBUG) only when it is on."""
    if artifact_name not in log_registry.artifact_names:
        raise ValueError(
            f"Artifact name: {artifact_name!r} not registered,"
            f"please call register_artifact({artifact_name!r}) in "
            "ember._logging._registrations.")
    qname = module_qname + f".__{artifact_name}"
    alog = logging.getLogger(qname)
    alog.artifact_name = artifact_name
    log_registry.register_artifact_log(qname)
    configure_artifact_log(alog)
    return alog


def configure_artifact_log(alog):
    # off by default: stays silent when only its component is at DEBUG
    if log_registry.is_off_by_default(alog.artifact_name):
        alog.propagate = False
    if log_state.is_artifact_enabled(alog.artifact_name):
        alog.setLevel(logging.DEBUG)
        alog.propagate = True


def get_loggers():
    """Every registered (component) logger."""
    return [logging.getLogger(qname) for qname in log_registry.get_log_qnames()]


# ----------------------------------------------------------------------------- set_logs

def set_logs(*, all=None, dynamo=None, aot=None, autograd=None, dynamic=None, inductor=None,
             distributed=None, c10d=None, ddp=None, fsdp=None, dtensor=None, onnx=None,
             bytecode=False, aot_graphs=False, aot_joint_graph=False, ddp_graphs=False,
             graph=False, graph_code=False, graph_code_verbose=False, graph_breaks=False,
             side_effects=False, graph_sizes=False, guards=False, recompiles=False,
             recompiles_verbose=False, trace_source=False, trace_call=False,
             trace_bytecode=False, output_code=False, kernel_code=False, schedule=False,
             perf_hints=False, pre_grad_graphs=False, post_grad_graphs=False,
             ir_pre_fusion=False, ir_post_fusion=False, onnx_diagnostics=False, fusion=False,
             overlap=False, export=None, modules=None, cudagraphs=False, sym_node=False,
             compiled_autograd=False, compiled_autograd_verbose=False,
             cudagraph_static_inputs=False, benchmarking=False, autotuning=False,
             incremental=False, graph_region_expansion=False, inductor_metrics=False,
             hierarchical_compile=False, compute_dependencies=False, caching=False):
    """Set component log levels and turn artifacts on (torch._logging.set_logs).

    Components take a `logging` level (`dynamo=logging.DEBUG`); artifacts take a bool
    (`graph_breaks=True`). Each call replaces the previous settings. `modules` maps further
    names (a registered name or a module such as "ember._dynamo.guards") to levels or
    bools. When EMBER_LOGS or TORCH_LOGS is set, the environment wins and this call only
    logs a warning, as in PyTorch.

    Example::

        >>> ember._logging.set_logs(dynamo=logging.DEBUG, graph_code=True)
    """
    env_name, _ = _env(LOG_ENV_VARS)
    if env_name is not None:
        log.warning("Using %s environment variable for log settings, ignoring call to set_logs",
                    env_name)
        return

    log_state.clear()
    modules = modules or {}
    kwargs = dict(
        torch=all, dynamo=dynamo, aot=aot, autograd=autograd, inductor=inductor,
        dynamic=dynamic, bytecode=bytecode, aot_graphs=aot_graphs,
        aot_joint_graph=aot_joint_graph, ddp_graphs=ddp_graphs, distributed=distributed,
        c10d=c10d, ddp=ddp, fsdp=fsdp, dtensor=dtensor, graph=graph, graph_code=graph_code,
        graph_code_verbose=graph_code_verbose, graph_breaks=graph_breaks,
        side_effects=side_effects, graph_sizes=graph_sizes, guards=guards,
        recompiles=recompiles, recompiles_verbose=recompiles_verbose,
        trace_source=trace_source, trace_call=trace_call, trace_bytecode=trace_bytecode,
        output_code=output_code, kernel_code=kernel_code, schedule=schedule,
        perf_hints=perf_hints, pre_grad_graphs=pre_grad_graphs,
        post_grad_graphs=post_grad_graphs, ir_pre_fusion=ir_pre_fusion,
        ir_post_fusion=ir_post_fusion, onnx=onnx, onnx_diagnostics=onnx_diagnostics,
        fusion=fusion, overlap=overlap, sym_node=sym_node, export=export,
        cudagraphs=cudagraphs, compiled_autograd=compiled_autograd,
        compiled_autograd_verbose=compiled_autograd_verbose,
        cudagraph_static_inputs=cudagraph_static_inputs, benchmarking=benchmarking,
        autotuning=autotuning, incremental=incremental,
        graph_region_expansion=graph_region_expansion, inductor_metrics=inductor_metrics,
        hierarchical_compile=hierarchical_compile, compute_dependencies=compute_dependencies,
        caching=caching)

    for alias, val in itertools.chain(kwargs.items(), modules.items()):
        if val is None:
            continue
        if log_registry.is_artifact(alias):
            if not isinstance(val, bool):
                raise ValueError(f"Expected bool to enable artifact {alias}, received {val}")
            if val:
                log_state.enable_artifact(alias)
        elif log_registry.is_log(alias) or alias in log_registry.child_log_qnames:
            if val not in logging._levelToName:
                raise ValueError(
                    f"Unrecognized log level for log {alias}: {val}, valid level values "
                    f"are: {','.join([str(k) for k in logging._levelToName])}")
            log_state.enable_log(log_registry.log_alias_to_log_qnames.get(alias, alias), val)
        elif _is_valid_module(alias):
            _enable_module(log_state, _module_name(alias), val)
        else:
            raise ValueError(f"Unrecognized log or artifact name passed to set_logs: {alias}")
    _init_logs()


# ----------------------------------------------------------------- the settings grammar

INCR_VERBOSITY_CHAR = "+"
DECR_VERBOSITY_CHAR = "-"
_SETTINGS_RE = re.compile(r"((\+|-)?[\w\.]+,\s*)*(\+|-)?[\w\.]+?")


def _validate_settings(settings):
    return _SETTINGS_RE.fullmatch(settings) is not None


def _module_name(qname):
    """A module named in settings; `torch.x` means `ember.x` (ember never imports torch)."""
    if qname == "torch" or qname.startswith("torch."):
        return ROOT + qname[len("torch"):]
    return qname


def _is_valid_module(qname):
    try:
        return importlib.util.find_spec(_module_name(qname)) is not None
    except (ImportError, ValueError):       # a parent package that does not exist
        return False


def _enable_module(state, module_name, level):
    if not _has_registered_parent(module_name):
        log_registry.register_log(module_name, module_name)
    else:
        log_registry.register_child_log(module_name)
    state.enable_log(module_name, level)


def _has_registered_parent(log_qname):
    registered = log_registry.get_log_qnames()
    cur = logging.getLogger(log_qname)
    while cur.parent:
        if cur.name in registered:
            return True
        cur = cur.parent
    return False


def help_message(verbose=False):
    env = _env(LOG_ENV_VARS)[0] or LOG_ENV_VARS[0]
    names = log_registry.artifact_names if verbose else log_registry.visible_artifacts
    heading = ("All registered names" if verbose else
               f"Visible registered names (use {env}='+help' for full list)")
    lines = (["all"] + sorted(log_registry.log_alias_to_log_qnames)
             + sorted(f"{name:<30}\t{log_registry.artifact_descriptions[name]}"
                      for name in names))
    setting_info = "  " + "\n  ".join(lines)
    examples = f"""
Examples:
  {env}="+dynamo,aot" will set the log level of the capture (dynamo) to
  logging.DEBUG and AOT to logging.INFO

  {env}="-dynamo,+inductor" will set the log level of dynamo to
  logging.ERROR and inductor to logging.DEBUG

  {env}="graph_breaks,recompiles" will enable those two artifacts

  {env}="+ember._dynamo.guards" will set the log level of that module to
  logging.DEBUG (torch.x names mean ember.x)

  EMBER_LOGS_FORMAT="%(levelname)s: %(message)s" sets the output format;
  EMBER_LOGS_OUT=/tmp/output.txt writes the logs to that file as well.
"""
    return f"\n{env} Info\n{examples}\n{heading}\n{setting_info}\n"


def _invalid_settings_err_msg(settings, env=None):
    env = env or LOG_ENV_VARS[0]
    valid = ", ".join(sorted(["all"] + list(log_registry.log_alias_to_log_qnames)
                             + list(log_registry.artifact_names)))
    return (f"\nInvalid log settings: {settings}, must be a comma separated list of fully\n"
            "qualified module names, registered log names or registered artifact names.\n"
            f'For more info on various settings, try {env}="help"\n'
            f"Valid settings:\n{valid}\n")


@functools.lru_cache
def _parse_log_settings(settings, env=None):
    """A LogState from EMBER_LOGS/TORCH_LOGS's grammar: comma list of names, `+name` DEBUG,
    `-name` ERROR, plain INFO; artifact names turn artifacts on; "all" is every log."""
    if settings == "":
        return LogState()
    if settings == "help":
        raise ValueError(help_message(verbose=False))
    if settings == "+help":
        raise ValueError(help_message(verbose=True))
    if not _validate_settings(settings):
        raise ValueError(_invalid_settings_err_msg(settings, env))

    state = LogState()
    for name in re.sub(r"\s+", "", settings).split(","):
        if name[0] == INCR_VERBOSITY_CHAR:
            level = logging.DEBUG
        elif name[0] == DECR_VERBOSITY_CHAR:
            level = logging.ERROR
        else:
            level = logging.INFO
        name = name.lstrip("+-")
        if name == "all":
            name = "torch"
        if log_registry.is_log(name):
            state.enable_log(log_registry.log_alias_to_log_qnames[name], level)
        elif log_registry.is_artifact(name):
            state.enable_artifact(name)
        elif _is_valid_module(name):
            _enable_module(state, _module_name(name), level)
        else:
            raise ValueError(_invalid_settings_err_msg(settings, env))
    return state


def _update_log_state_from_env():
    global log_state
    env, settings = _env(LOG_ENV_VARS)
    if settings is not None:
        log_state = _parse_log_settings(settings, env)


# ----------------------------------------------------------------------------- output

@functools.lru_cache
def _make_module_path_relative(abs_path, sys_path):
    resolved = pathlib.Path(abs_path).resolve()
    for path in sys_path:
        try:
            return str(resolved.relative_to(path))
        except ValueError:
            continue
    # a package imported through an editable install's finder (its root is not on
    # sys.path): relative to the directory above the outermost package
    root = resolved.parent
    if (root / "__init__.py").exists():
        while (root.parent / "__init__.py").exists():
            root = root.parent
        return str(resolved.relative_to(root.parent))
    return str(resolved)


def make_module_path_relative(abs_path):
    """A module's file relative to the sys.path entry it was imported from."""
    return _make_module_path_relative(abs_path, tuple(sys.path))


_GLOG_LEVEL = {"DEBUG": "V", "INFO": "I", "WARNING": "W", "ERROR": "E", "CRITICAL": "C"}


class TorchLogsFormatter(logging.Formatter):
    """glog-style lines (see the module docstring), PyTorch's format for its own logs."""

    def format(self, record):
        artifact_name = getattr(logging.getLogger(record.name), "artifact_name", None)
        if artifact_name is not None:
            formatter = log_registry.artifact_log_formatters.get(artifact_name)
            if formatter is not None:
                return formatter.format(record)

        record.message = record.getMessage()
        record.asctime = self.formatTime(record, "%m%d %H:%M:%S")
        s = record.message
        if record.exc_info:
            if artifact_name != "graph_breaks" or _dynamo_verbose():
                if not record.exc_text:
                    record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            s = (s if s[-1:] == "\n" else s + "\n") + record.exc_text
        if record.stack_info:
            s = (s if s[-1:] == "\n" else s + "\n") + self.formatStack(record.stack_info)

        level = _GLOG_LEVEL.get(record.levelname, record.levelname)
        artifact = f" [__{artifact_name}]" if artifact_name is not None else ""
        prefix = (f"{level}{record.asctime}.{int(record.msecs * 1000):06d} {record.process} "
                  f"{make_module_path_relative(record.pathname)}:{record.lineno}]{artifact}")
        return "\n".join(f"{prefix} {line}" for line in s.split("\n"))


def _dynamo_verbose():
    """config.verbose, without importing the capture just to format a line."""
    config = sys.modules.get("ember._dynamo.config")
    return bool(getattr(config, "verbose", False))


def _default_formatter():
    _, fmt = _env(LOG_FORMAT_ENV_VARS)
    if fmt is None:
        return TorchLogsFormatter()
    if fmt in ("short", "basic"):
        fmt = logging.BASIC_FORMAT
    return logging.Formatter(fmt)


handlers = WeakSet()     # the handlers we created: user handlers are never touched


def _track_handler(handler):
    handlers.add(handler)
    return handler


def _clear_handlers(lg):
    for handler in [h for h in lg.handlers if h in handlers]:
        lg.removeHandler(handler)


class _StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when a line is written, not when the handler was made:
    pytest's capsys and contextlib.redirect_stderr see the logs (PyTorch's handler keeps the
    stream of the moment it was set up)."""

    def __init__(self):
        logging.Handler.__init__(self)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _setup_handlers(create_handler_fn, lg):
    handler = _track_handler(create_handler_fn())
    handler.setFormatter(_default_formatter())
    handler.setLevel(logging.DEBUG)
    lg.addHandler(handler)


def _reset_logs():
    for qname in log_registry.get_log_qnames():
        lg = logging.getLogger(qname)
        lg.setLevel(logging.WARNING)
        lg.propagate = False
        _clear_handlers(lg)
    for qname in itertools.chain(log_registry.artifact_log_qnames,
                                 log_registry.child_log_qnames):
        lg = logging.getLogger(qname)
        lg.setLevel(logging.NOTSET)
        lg.propagate = True


def _get_log_state():
    return log_state


def _set_log_state(state):
    global log_state
    log_state = state


def _init_logs(log_file_name=None):
    """Apply the current settings (the environment's, if set) to every registered logger."""
    _reset_logs()
    _update_log_state_from_env()
    _, out = _env(LOG_OUT_ENV_VARS)
    if out is not None:
        log_file_name = out

    # registered logs follow their parent's level, except the root, which stays at WARNING
    # so that nothing leaks below it
    for qname in log_registry.get_log_qnames():
        if qname != ROOT:
            logging.getLogger(qname).setLevel(logging.NOTSET)
    for qname, level in log_state.get_log_level_pairs():
        logging.getLogger(qname).setLevel(level)
    for qname in log_registry.get_log_qnames():
        lg = logging.getLogger(qname)
        _setup_handlers(_StderrHandler, lg)
        if log_file_name is not None:
            _setup_handlers(lambda: logging.FileHandler(log_file_name), lg)
    # last: artifact loggers look at their ancestors' levels
    for qname in log_registry.artifact_log_qnames:
        configure_artifact_log(logging.getLogger(qname))


# ----------------------------------------------------------------------------- helpers

class LazyString:
    """A log argument computed only if the line is printed: log.debug("%s", LazyString(f))."""

    def __init__(self, func, *args, **kwargs):
        self.func, self.args, self.kwargs = func, args, kwargs

    def __str__(self):
        return str(self.func(*self.args, **self.kwargs))


@functools.lru_cache(None)
def warning_once(logger_obj, *args, **kwargs):
    """logger.warning(...), once per distinct arguments (PyTorch's helper)."""
    logger_obj.warning(*args, **kwargs)
