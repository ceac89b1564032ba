"""The legacy profiler API (torch.autograd.profiler), on ember.profiler's machinery."""
from ..profiler import EventList, FunctionEvent, FunctionEventAvg, record_function
from ..profiler import profile as _profile

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile(_profile):
    """torch.autograd.profiler.profile(enabled=True, *, use_cuda=False, record_shapes=False,
    with_flops=False, profile_memory=False, with_stack=False, with_modules=False)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False,
                 with_modules=False, use_kineto=False, use_cpu=True, experimental_config=None,
                 acc_events=False, custom_trace_id_callback=None):
        if use_cuda:
            raise RuntimeError("ember.autograd.profiler: use_cuda=True needs a CUDA device; "
                               "ember profiles the cpu")
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops,
                         with_modules=with_modules, enabled=enabled)

    def __enter__(self):
        super().__enter__()
        return self

    @property
    def function_events(self):
        return self.events()
