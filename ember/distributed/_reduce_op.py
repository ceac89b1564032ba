"""ReduceOp (torch.distributed.ReduceOp) and the NumPy reduction each one means."""
import enum

import numpy as np

__all__ = ["ReduceOp", "reduce_op", "combine"]


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """`ReduceOp.SUM` etc. are RedOpType members, as in PyTorch."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED

    def __init__(self, op=RedOpType.SUM):
        self.op = RedOpType(op)

    def __eq__(self, other):
        return int(self.op) == int(other)

    def __hash__(self):
        return hash(self.op)

    def __int__(self):
        return int(self.op)


class reduce_op:          # the deprecated alias PyTorch still exports
    SUM, PRODUCT, MIN, MAX = (RedOpType.SUM, RedOpType.PRODUCT, RedOpType.MIN,
                              RedOpType.MAX)


def _as_type(op):
    if isinstance(op, ReduceOp):
        return op.op
    try:
        return RedOpType(int(op))
    except (TypeError, ValueError):
        raise ValueError(f"Invalid ReduceOp: {op!r}") from None


def combine(op, dtype):
    """The in-place binary NumPy function `f(acc, other, out=acc)` for `op` on `dtype`.

    AVG reduces as SUM; the caller divides by the group size at the end.
    """
    op = _as_type(op)
    is_bool = dtype == np.bool_
    if op in (RedOpType.SUM, RedOpType.AVG):
        return np.logical_or if is_bool else np.add
    if op == RedOpType.PRODUCT:
        return np.logical_and if is_bool else np.multiply
    if op == RedOpType.MIN:
        return np.minimum
    if op == RedOpType.MAX:
        return np.maximum
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR):
        if np.dtype(dtype).kind not in "biu":
            raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype "
                               f"{np.dtype(dtype)}")
        return {RedOpType.BAND: np.bitwise_and, RedOpType.BOR: np.bitwise_or,
                RedOpType.BXOR: np.bitwise_xor}[op]
    raise NotImplementedError(f"ReduceOp.{op.name} is not supported by ember.distributed "
                              f"(use SUM/AVG/PRODUCT/MIN/MAX/BAND/BOR/BXOR)")


def is_avg(op):
    return _as_type(op) == RedOpType.AVG
