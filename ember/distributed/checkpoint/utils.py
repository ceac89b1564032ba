"""_DistWrapper: the plan exchange of save/load over a process group (or none).

Note: every step runs locally on each rank, then the coordinator (group rank 0) runs the
global step on all ranks' results and hands each rank its part. An exception on any rank
is collected and re-raised on every rank as CheckpointException, so no rank is left waiting.
"""

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """A save/load step failed on some ranks; a BaseException, as in PyTorch."""

    def __init__(self, msg, failures):
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self):
        return self._failures

    def __str__(self):
        return f"CheckpointException ranks:{self._failures!r}"


def _dist():
    from ... import distributed
    return distributed


class _DistWrapper:
    def __init__(self, group, use_dist, coordinator_rank=0):
        self.group, self.use_dist = group, use_dist
        dist = _dist()
        if use_dist:
            self.rank, self.world = dist.get_rank(group), dist.get_world_size(group)
            self.coordinator = dist.get_global_rank(group, coordinator_rank) \
                if group is not None else coordinator_rank
        else:
            self.rank, self.world, self.coordinator = 0, 1, 0
        self.is_coordinator = self.rank == coordinator_rank

    def _gather(self, obj):
        if not self.use_dist:
            return [obj]
        out = [None] * self.world if self.is_coordinator else None
        _dist().gather_object(obj, out, dst=self.coordinator, group=self.group)
        return out

    def _scatter(self, objs):
        if not self.use_dist:
            return objs[0]
        out = [None]
        _dist().scatter_object_list(out, objs if self.is_coordinator else None,
                                    src=self.coordinator, group=self.group)
        return out[0]

    def _broadcast(self, obj):
        if not self.use_dist:
            return obj
        box = [obj]
        _dist().broadcast_object_list(box, src=self.coordinator, group=self.group)
        return box[0]

    @staticmethod
    def _try(fn, *args):
        try:
            return fn(*args)
        except Exception as e:              # collected and re-raised on every rank
            return _Failure(e)

    def reduce_scatter(self, step, map_fun, reduce_fun):
        """map on each rank, reduce on the coordinator, each rank gets its piece back."""
        local = self._try(map_fun)
        gathered = self._gather(local)
        if self.is_coordinator:
            failures = {r: v.exc for r, v in enumerate(gathered) if isinstance(v, _Failure)}
            if failures:
                pieces = [CheckpointException(step, failures)] * self.world
            else:
                res = self._try(reduce_fun, gathered)
                pieces = ([CheckpointException(step, {self.rank: res.exc})] * self.world
                          if isinstance(res, _Failure) else res)
        else:
            pieces = None
        mine = self._scatter(pieces)
        if isinstance(mine, CheckpointException):
            raise mine
        return mine

    def all_reduce(self, step, map_fun, reduce_fun):
        """map on each rank, reduce on the coordinator, everyone gets the reduced result."""
        local = self._try(map_fun)
        gathered = self._gather(local)
        result = None
        if self.is_coordinator:
            failures = {r: v.exc for r, v in enumerate(gathered) if isinstance(v, _Failure)}
            if failures:
                result = CheckpointException(step, failures)
            else:
                result = self._try(reduce_fun, gathered)
                if isinstance(result, _Failure):
                    result = CheckpointException(step, {self.rank: result.exc})
        result = self._broadcast(result)
        if isinstance(result, CheckpointException):
            raise result
        return result


class _Failure:
    def __init__(self, exc):
        self.exc = exc

    def __reduce__(self):
        try:
            import pickle
            pickle.dumps(self.exc)
            return (_Failure, (self.exc,))
        except Exception:
            return (_Failure, (RuntimeError(repr(self.exc)),))
