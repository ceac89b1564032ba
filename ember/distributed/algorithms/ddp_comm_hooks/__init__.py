"""DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks)."""
from enum import Enum
from functools import partial

from . import default_hooks, powerSGD_hook

__all__ = ["DDPCommHookType", "default_hooks", "powerSGD_hook", "register_ddp_comm_hook"]


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


def _powerSGD_comm_hook_wrapper(comm_hook, model, state, matrix_approximation_rank,
                                start_powerSGD_iter=1_000):
    state = powerSGD_hook.PowerSGDState(process_group=state,
                                        matrix_approximation_rank=matrix_approximation_rank,
                                        start_powerSGD_iter=start_powerSGD_iter)
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(Enum):
    ALLREDUCE = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_ddp_comm_hook_wrapper,
                            comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_ddp_comm_hook_wrapper,
                            comm_hook=default_hooks.bf16_compress_hook)
    POWER_SGD = partial(_powerSGD_comm_hook_wrapper, comm_hook=powerSGD_hook.powerSGD_hook,
                        matrix_approximation_rank=1)
    POWER_SGD_RANK2 = partial(_powerSGD_comm_hook_wrapper,
                              comm_hook=powerSGD_hook.powerSGD_hook,
                              matrix_approximation_rank=2)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    comm_hook_type.value(model=model, state=state)
