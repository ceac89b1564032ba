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
