"""torch.cuda.amp.grad_scaler: GradScaler for device "cuda"."""
from ...amp._device_aliases import device_grad_scaler

__all__ = ["GradScaler"]

GradScaler = device_grad_scaler("cuda")
