"""Stateful (torch.distributed.checkpoint.stateful): objects dcp.save/load call into.

Note: a runtime-checkable Protocol, as in PyTorch, so anything with state_dict() and
load_state_dict() counts (nn.Module, optimizers, the DCP tutorial's AppState wrapper):
save writes what state_dict() returns, load fills that dict and hands it back to
load_state_dict().
"""
from typing import Any, Protocol, runtime_checkable

__all__ = ["Stateful", "StatefulT"]


@runtime_checkable
class Stateful(Protocol):
    def state_dict(self) -> dict[str, Any]:
        ...

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        ...


StatefulT = Stateful
