"""torch.distributed.elastic.multiprocessing: worker error recording (see errors)."""
from .errors import ChildFailedError, ProcessFailure, record  # noqa: F401
