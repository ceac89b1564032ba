"""PowerSGD gradient compression for DDP (Vogels et al., 2019), PyTorch's hook.

Note: each gradient matrix M (n x m) is sent as two thin factors P = M Q (n x r) and
Q = M^T P (m x r) with error feedback and warm-started Q; 1-D tensors and matrices that
would not shrink go through a plain all-reduce. Deliberate differences from PyTorch: the
three all-reduces run in the hook's own thread one after another (so every rank issues
them in the same order; PyTorch chains them in future callbacks), and the random initial
Q comes from ember's generator, so factors are not bit-identical to PyTorch's.
"""
import numpy as np

from ... import all_reduce, group as _group
from . import default_hooks

__all__ = ["PowerSGDState", "powerSGD_hook", "batched_powerSGD_hook"]


def _orthogonalize(matrix, epsilon=0):
    """Gram-Schmidt on the columns of `matrix` (n x r), in place."""
    import ember
    num_cols = matrix.shape[-1]
    for i in range(num_cols):
        col = matrix[:, i:i + 1]
        norm = ember.linalg.vector_norm(col, dim=0, keepdim=True)
        if epsilon == 0:
            col.copy_(ember.where(norm > 0, col / norm, ember.zeros_like(col)))
        else:
            col.copy_(col / (norm + epsilon))
        if i + 1 < num_cols:
            rest = matrix[:, i + 1:]
            rest.sub_((col * rest).sum(dim=0, keepdim=True) * col)


def _should_compress(num_rows, num_cols, matrix_approximation_rank, min_compression_rate):
    uncompressed_size = num_rows * num_cols
    compressed_size = (num_rows + num_cols) * matrix_approximation_rank
    return (compressed_size * min_compression_rate < uncompressed_size, uncompressed_size,
            compressed_size)


class PowerSGDState:
    __slots__ = ["process_group", "matrix_approximation_rank", "start_powerSGD_iter",
                 "min_compression_rate", "orthogonalization_epsilon", "use_error_feedback",
                 "warm_start", "batch_tensors_with_same_shape", "rng", "error_dict",
                 "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency",
                 "next_stats_report"]

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000,
                 min_compression_rate=2, use_error_feedback=True, warm_start=True,
                 orthogonalization_epsilon=0, random_seed=0,
                 compression_stats_logging_frequency=10_000,
                 batch_tensors_with_same_shape=False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or "
                             "`warm_start` is enabled, because PowerSGD can only be applied "
                             "after the first two iterations in DDP.")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)
        self.error_dict = {}
        self.p_memory_dict = {}
        self.q_memory_dict = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self):
        return {s: getattr(self, s) for s in self.__slots__ if s != "process_group"}

    def __setstate__(self, state):
        self.process_group = _group.WORLD
        for k, v in state.items():
            setattr(self, k, v)

    def maybe_increase_iter(self, bucket):
        if bucket.is_last():
            self.iter += 1

    def compression_stats(self):
        rate = (self.total_numel_before_compression / self.total_numel_after_compression
                if self.total_numel_after_compression > 0 else 0)
        return (rate, self.total_numel_before_compression, self.total_numel_after_compression)


def powerSGD_hook(state, bucket):
    """Compress each gradient matrix of the bucket to rank-r factors and all-reduce them."""
    import ember
    from ....futures import Future
    group_to_use = state.process_group if state.process_group is not None else _group.WORLD
    world_size = group_to_use.size()
    input_tensor = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return default_hooks._allreduce_fut(group_to_use, input_tensor)
    dtype = input_tensor.dtype
    bucket_index = bucket.index()
    input_tensor_cp = None
    if state.use_error_feedback:
        if bucket_index in state.error_dict:
            input_tensor.add_(state.error_dict[bucket_index])
        else:
            state.error_dict[bucket_index] = ember.zeros(input_tensor.shape[0], dtype=dtype)
        input_tensor_cp = input_tensor.detach().clone()
    tensors = bucket.gradients()
    to_compress, uncompressed = [], []
    total_p = total_q = 0
    for tensor in tensors:
        matrix = tensor.reshape(tensor.shape[0], -1) if tensor.dim() else tensor.reshape(1, 1)
        n, m = matrix.shape
        r = min(n, m, state.matrix_approximation_rank)
        ok, before, after = _should_compress(n, m, r, state.min_compression_rate)
        state.total_numel_before_compression += before
        if ok and tensor.dim() > 1:
            to_compress.append((tensor, n, m, r))
            total_p += n * r
            total_q += m * r
            state.total_numel_after_compression += after
        else:
            uncompressed.append(tensor)
            state.total_numel_after_compression += before
    # 1. plain all-reduce of what is not worth compressing
    if uncompressed:
        flat = ember.cat([t.reshape(-1) for t in uncompressed])
        all_reduce(flat, group=group_to_use)
        flat.div_(world_size)
        idx = 0
        for t in uncompressed:
            t.copy_(flat[idx:idx + t.numel()].view(t.shape))
            idx += t.numel()
    if to_compress:
        need_random_q = not state.warm_start or bucket_index not in state.p_memory_dict
        if need_random_q:
            state.p_memory_dict[bucket_index] = ember.empty(total_p, dtype=dtype)
            state.q_memory_dict[bucket_index] = ember.empty(total_q, dtype=dtype)
        pmem, qmem = state.p_memory_dict[bucket_index], state.q_memory_dict[bucket_index]
        ps, qs, pi, qi = [], [], 0, 0
        for _, n, m, r in to_compress:
            ps.append(pmem[pi:pi + n * r].view(n, r))
            qs.append(qmem[qi:qi + m * r].view(m, r))
            pi += n * r
            qi += m * r
        if need_random_q:
            gen = ember.Generator().manual_seed(int(state.rng.randint(1_000_000_000)))
            for q in qs:
                q.copy_(ember.randn(*q.shape, generator=gen, dtype=dtype))
                _orthogonalize(q, state.orthogonalization_epsilon)
        else:
            for q in qs:
                _orthogonalize(q, state.orthogonalization_epsilon)
        mats = [t.reshape(n, m) for t, n, m, _ in to_compress]
        for mat, q, p in zip(mats, qs, ps):
            p.copy_(ember.matmul(mat, q))
        all_reduce(pmem, group=group_to_use)             # 2. P = sum M Q
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for mat, p, q in zip(mats, ps, qs):
            q.copy_(ember.matmul(mat.t(), p))
        all_reduce(qmem, group=group_to_use)             # 3. Q = sum M^T P
        qmem.div_(world_size)
        for (t, n, m, _), p, q in zip(to_compress, ps, qs):
            t.copy_(ember.matmul(p, q.t()).view(t.shape))
    if state.use_error_feedback:
        state.error_dict[bucket_index] = input_tensor_cp - input_tensor
    if not state.warm_start:
        state.p_memory_dict.clear()
        state.q_memory_dict.clear()
    state.maybe_increase_iter(bucket)
    fut = Future()
    fut.set_result(input_tensor)
    return fut


def batched_powerSGD_hook(state, bucket):
    raise NotImplementedError("batched_powerSGD_hook is not implemented in ember; use "
                              "powerSGD_hook")
