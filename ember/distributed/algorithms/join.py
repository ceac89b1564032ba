"""Join: training with uneven inputs — ranks that run out of data shadow the others.

Note: PyTorch's protocol, collective for collective. A rank still training all-reduces
a 1 at the start of each iteration (`notify_join_context`); a rank that has left the
loop all-reduces a 0 instead, reads how many ranks still train, and runs each joinable's
`main_hook` (which issues the same collectives the trainers issue, with zeros), until
the count is 0; then every joinable's `post_hook(is_last_joiner)` runs.
"""
import abc
import warnings

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """Per-joinable shadowing: `main_hook` per trainer iteration, `post_hook` at the end."""

    def main_hook(self):
        ...

    def post_hook(self, is_last_joiner):
        ...


class Joinable(abc.ABC):
    @abc.abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abc.abstractmethod
    def join_hook(self, **kwargs):
        ...

    @property
    @abc.abstractmethod
    def join_device(self):
        ...

    @property
    @abc.abstractmethod
    def join_process_group(self):
        ...


class _JoinConfig:
    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(False, False, False)


class Join:
    """Context manager: `with Join([model, optimizer]): for batch in my_batches: ...`."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self):
        assert len(self._joinables) > 0
        is_first = True
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig(self._enable,
                                                self._throw_on_early_termination, is_first)
            is_first = False

    def _extract_dist_info(self):
        process_group = None
        device = None
        for joinable in self._joinables:
            if process_group is None:
                process_group = joinable.join_process_group
            elif process_group != joinable.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if device is None:
                device = joinable.join_device
        self._process_group = process_group
        from .. import get_rank
        self._rank = get_rank(self._process_group)
        self._device = device

    def __enter__(self):
        ...

    def __exit__(self, type, value, traceback):
        if not self._enable or type:
            return
        all_procs_joined = False
        is_last_joiner = True
        i = 0
        WARN_THRESHOLD = 1000
        warnings.simplefilter("once")
        while not all_procs_joined:
            if i > WARN_THRESHOLD:
                warnings.warn(f"Detected uneven input skew of greater than {WARN_THRESHOLD}. "
                              f"This means that rank {self._rank} has at least "
                              f"{WARN_THRESHOLD} fewer inputs than other currently-active "
                              f"ranks. This level of skew could lead to performance "
                              f"degradation during training.")
            num_nonjoined_procs = self._get_num_nonjoined_procs()
            if num_nonjoined_procs == 0:
                all_procs_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for join_hook in self._join_hooks:
                    join_hook.main_hook()
                is_last_joiner = False
                i += 1
        for join_hook in self._join_hooks:
            join_hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self):
        import ember
        from .. import all_reduce
        num_nonjoined_procs = ember.zeros(1, device=self._device)
        all_reduce(num_nonjoined_procs, group=self._process_group)
        return num_nonjoined_procs.item()

    def _notify_procs_to_terminate(self):
        import ember
        from .. import all_reduce
        ones = ember.ones(1, device=self._device)
        all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by a joinable each iteration before its collectives; returns the Work."""
        import ember
        from .. import all_reduce
        assert hasattr(joinable, "_join_config"), (
            f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        join_config = joinable._join_config
        if not join_config.is_first_joinable or not join_config.enable:
            return None
        device = joinable.join_device
        process_group = joinable.join_process_group
        ones = ember.ones(1, device=device)
        work = all_reduce(ones, group=process_group, async_op=True)
        if join_config.throw_on_early_termination:
            zeros = ember.zeros(1, device=device)
            all_reduce(zeros, group=process_group)
            should_throw = zeros.item()
            if should_throw:
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
