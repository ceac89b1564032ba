"""DDP's gradient reducer: buckets of gradients all-reduced while backward still runs.

Note: parameters are packed, in reverse registration order (roughly the order their
gradients become ready), into flat per-dtype buckets (the first one small, so
communication starts early; then `bucket_cap_mb`). A post-accumulate-grad hook copies
each gradient into its bucket; when a bucket is full its all-reduce (or comm hook) is
launched asynchronously, always in bucket order so every rank issues the same sequence.
When the last bucket is launched the hook waits for all of them and writes the averaged
gradients back (PyTorch does this in an autograd-engine callback; ember's engine runs
hooks in order, so the last hook is the end of the reduction).
"""
import numpy as np

from ... import _dtype as D
from ...futures import Future

__all__ = ["GradBucket", "Reducer", "compute_bucket_assignment_by_size"]

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


class GradBucket:
    """What a comm hook receives (torch.distributed.GradBucket)."""

    def __init__(self, bucket, is_last):
        self._b, self._last = bucket, is_last
        self._buffer = bucket.buffer

    def index(self):
        return self._b.index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return [self._b.slot(i) for i in range(len(self._b.params))]

    def parameters(self):
        return list(self._b.params)

    def is_last(self):
        return self._last

    def set_buffer(self, buffer):
        self._buffer = buffer

    def offsets(self):
        return list(self._b.offsets)

    def lengths(self):
        return list(self._b.lengths)


class _Bucket:
    def __init__(self, index, params):
        import ember
        self.index, self.params = index, params
        self.lengths = [p.numel() for p in params]
        self.offsets = list(np.cumsum([0] + self.lengths[:-1]))
        self.buffer = ember.zeros(sum(self.lengths), dtype=params[0].dtype)
        self.pending = len(params)
        self.fut = None

    def slot(self, i):
        o, n = self.offsets[i], self.lengths[i]
        return self.buffer[o:o + n].view(self.params[i].shape)


def compute_bucket_assignment_by_size(params, limits):
    """Bucket indices (forward order, per dtype, first limit then the last one repeating)."""
    buckets, open_ = [], {}
    for i, p in enumerate(params):
        key = p.dtype
        cur = open_.get(key)
        if cur is None:
            cur = open_[key] = {"idx": [], "bytes": 0, "limit": 0}
        cur["idx"].append(i)
        cur["bytes"] += p.numel() * p.element_size()
        lim = limits[min(cur["limit"], len(limits) - 1)]
        if cur["bytes"] >= lim:
            buckets.append(cur["idx"])
            open_[key] = {"idx": [], "bytes": 0, "limit": cur["limit"] + 1}
    buckets += [c["idx"] for c in open_.values() if c["idx"]]
    return buckets


class Reducer:
    def __init__(self, params, process_group, bucket_cap_bytes, gradient_as_bucket_view,
                 find_unused_parameters):
        self.params = params
        self.pg = process_group
        self.grad_as_view = gradient_as_bucket_view
        self.find_unused = find_unused_parameters
        assignment = compute_bucket_assignment_by_size(
            params, [DEFAULT_FIRST_BUCKET_BYTES, bucket_cap_bytes])
        self.buckets = [_Bucket(k, [params[i] for i in idx])
                        for k, idx in enumerate(reversed(assignment))]
        self.where = {}
        self.index_of = {id(p): i for i, p in enumerate(params)}
        for b in self.buckets:
            for j, p in enumerate(b.params):
                self.where[id(p)] = (b, j)
        self.comm_hook = None
        self.comm_state = None
        self.expect_hooks = False       # prepare_for_backward ran for this iteration
        self.require_finalize = False   # a hook fired, reduction in flight
        self.next_bucket = 0
        self.used = None
        self.divide_by = process_group.size()
        self.handles = [p.register_post_accumulate_grad_hook(self._hook) for p in params]

    # ----------------------------------------------------------------- per iteration
    def prepare_for_backward(self, unused_params=()):
        if self.require_finalize:
            raise RuntimeError(_UNFINISHED)
        self.expect_hooks = True
        self.next_bucket = 0
        for b in self.buckets:
            b.pending, b.fut = len(b.params), None
        self.used = np.zeros(len(self.params), np.int32) if self.find_unused else None
        for p in unused_params:
            self._mark_ready(p, have_grad=False)

    def _hook(self, p):
        if not self.expect_hooks:
            return
        if self.used is not None:
            self.used[self._index(p)] = 1
        self._mark_ready(p, have_grad=True)

    def _index(self, p):
        return self.index_of[id(p)]

    def _mark_ready(self, p, have_grad):
        self.require_finalize = True
        b, j = self.where[id(p)]
        slot = b.buffer._data[b.offsets[j]:b.offsets[j] + b.lengths[j]]
        if have_grad and p.grad is not None:
            g = p.grad._data
            if not np.shares_memory(g, slot):
                np.copyto(slot, g.reshape(-1))
        else:
            slot[...] = 0
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready()

    def _launch_ready(self):
        while self.next_bucket < len(self.buckets) and \
                self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            last = self.next_bucket == len(self.buckets) - 1
            b.fut = self._run_hook(b, last)
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            self.finalize()

    def _run_hook(self, b, last):
        if self.comm_hook is not None:
            fut = self.comm_hook(self.comm_state, GradBucket(b, last))
            if not isinstance(fut, Future):
                raise RuntimeError("Communication hook: return annotation should be "
                                   "torch.futures.Future[torch.Tensor]")
            return fut
        from ... import distributed as dist
        b.buffer.div_(self.divide_by)
        work = dist.all_reduce(b.buffer, group=self.pg, async_op=True)
        return work.get_future().then(lambda f: f.value()[0])

    def finalize(self):
        from ... import distributed as dist
        used_global = None
        if self.used is not None:
            import ember
            t = ember.from_numpy(self.used.copy())
            dist.all_reduce(t, group=self.pg)
            used_global = t.numpy()
        for b in self.buckets:
            res = b.fut.wait()
            if res is not b.buffer:
                b.buffer.copy_(res)
            for j, p in enumerate(b.params):
                if used_global is not None and not used_global[self._index(p)]:
                    continue            # unused on every rank: grad left as it was
                self._write_grad(p, b, j)
        self.expect_hooks = False
        self.require_finalize = False

    def _write_grad(self, p, b, j):
        view = b.slot(j)
        if self.grad_as_view:
            if p.grad is None or not np.shares_memory(p.grad._data, view._data):
                p.grad = view
            return
        if p.grad is None:
            p.grad = view.clone()
        else:
            p.grad._data[...] = view._data
            p.grad._bump()

    # ----------------------------------------------------------------- join support
    def shadow_backward(self):
        """A joined rank's matching collectives: all-reduce zero buckets in bucket order."""
        from ... import distributed as dist
        import ember
        works = []
        for b in self.buckets:
            b.buffer.zero_()
            if self.comm_hook is not None:
                works.append(self.comm_hook(self.comm_state, GradBucket(
                    b, b.index == len(self.buckets) - 1)))
            else:
                works.append(dist.all_reduce(b.buffer, group=self.pg, async_op=True)
                             .get_future())
        if self.find_unused:
            t = ember.zeros(len(self.params), dtype=D.int32)
            dist.all_reduce(t, group=self.pg)
        for w in works:
            w.wait()

    def remove_hooks(self):
        for h in self.handles:
            h.remove()


_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")
