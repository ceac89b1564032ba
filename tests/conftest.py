import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

# pytest-xdist already runs one worker per core: one thread each keeps PyTorch (the
# oracle) and the subprocesses tests start from oversubscribing the machine.
os.environ.setdefault("OMP_NUM_THREADS", "1")
try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    pass

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import ember  # noqa: E402


@pytest.fixture(autouse=True)
def _deterministic_and_clean_globals():
    """Each test starts from the same random state and global switches, whatever ran
    before it on this xdist worker (statistical tests must not depend on test order)."""
    ember.manual_seed(0)
    np.random.seed(0)
    try:
        import torch as _torch
        _torch.manual_seed(0)
    except ImportError:
        _torch = None
    yield
    ember.set_default_dtype(ember.float32)
    ember.set_grad_enabled(True)
    ember.autograd.set_detect_anomaly(False)
    ember.use_deterministic_algorithms(False)
    if _torch is not None:          # torch's setters are slow: only undo what changed
        if _torch.get_default_dtype() is not _torch.float32:
            _torch.set_default_dtype(_torch.float32)
        if not _torch.is_grad_enabled():
            _torch.set_grad_enabled(True)
        if _torch.is_anomaly_enabled():
            _torch.autograd.set_detect_anomaly(False)
        if _torch.are_deterministic_algorithms_enabled():
            _torch.use_deterministic_algorithms(False)
