"""ember._dynamo.config: the capture's settings, with PyTorch's names and defaults.

Why: users tune `torch.compile` through this module (`config.cache_size_limit = 64`,
`with config.patch(capture_scalar_outputs=True): ...`) and programs written for PyTorch
must keep working unchanged. Writing an unknown name raises AttributeError, so a typo is
never silently ignored (see ember.utils._config_module). The environment variables are
PyTorch's own (TORCHDYNAMO_VERBOSE=1 and so on), read once at import.
"""
import os
import sys

from ember.utils._config_module import Config, install_config_module

# [debug] Print full stack traces on warnings and errors (and graph-break tracebacks).
verbose = os.environ.get("TORCHDYNAMO_VERBOSE", "0") == "1"

# Compiled entries (one per guard set) kept per code object before the function runs
# eagerly with a "recompile limit reached" warning in the recompiles log.
recompile_limit = 8
# Compiled entries per code object over the whole process (summed across guard sets).
accumulated_recompile_limit = 256
# The names most programs use (PyTorch < 2.6); aliases of the two above.
cache_size_limit = Config(alias="ember._dynamo.config.recompile_limit")
accumulated_cache_size_limit = Config(alias="ember._dynamo.config.accumulated_recompile_limit")
# Raise FailOnRecompileLimitHit instead of falling back to eager when the limit is hit.
fail_on_recompile_limit_hit = False

# Whether shapes may become symbolic at all (dynamic=False in compile turns it off).
dynamic_shapes = True
# Only dims marked dynamic get symbols at first; the rest start static.
assume_static_by_default = True
# First compile static; a recompile caused only by sizes makes those dims symbolic.
automatic_dynamic_shapes = os.environ.get("TORCH_DYNAMO_AUTOMATIC_DYNAMIC_SHAPES", "1") == "1"
# True: Python int inputs are always specialized (a guard on the value); False: automatic
# dynamic may make an int that changes between calls symbolic.
specialize_int = False
# Python float inputs likewise.
specialize_float = False
# Parameters keep static shapes even when dynamic=True.
force_parameter_static_shapes = True
# Let mark_dynamic'd dims be specialized without an error (PyTorch's escape hatch).
allow_ignore_mark_dynamic = False

# Fall back to eager, with a warning, when capture fails with an internal error.
suppress_errors = bool(os.environ.get("TORCHDYNAMO_SUPPRESS_ERRORS", False))
# Capture Tensor.item() and friends into the graph (an unbacked symbol) instead of breaking.
capture_scalar_outputs = os.environ.get("TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS") == "1"
# Capture ops whose output shape depends on data (nonzero, unique) instead of breaking.
capture_dynamic_output_shape_ops = (
    os.environ.get("TORCHDYNAMO_CAPTURE_DYNAMIC_OUTPUT_SHAPE_OPS", "0") == "1")
# Raise RecompileError on any recompile (tests use it to prove a program compiles once).
error_on_recompile = False

# Trace NumPy calls (on ndarrays or on tensors turned into ndarrays) into ember ops.
trace_numpy = True
# dtypes NumPy's defaults map to when traced NumPy code creates arrays.
numpy_default_float = "float64"
numpy_default_complex = "complex128"
numpy_default_int = "int64"
# Use NumPy's own random stream for traced np.random calls (else ember's Philox).
use_numpy_random_stream = False
# Capture autograd.Function forward/backward instead of breaking on them.
capture_autograd_function = True
# Capture ember.func transforms (grad, vmap, ...) instead of breaking on them.
capture_func_transforms = True
# Replace `assert` on tensors with an in-graph assert instead of a graph break.
rewrite_assert_with_torch_assert = True
# Raise on `with ctx_manager` objects capture does not understand (else graph break).
raise_on_ctx_manager_usage = True

# Split graphs of a DDP-wrapped module at gradient-bucket boundaries (DDPOptimizer), so a
# compiled backward still lets DDP overlap its all-reduces with the rest of backward.
optimize_ddp = True

install_config_module(sys.modules[__name__])

