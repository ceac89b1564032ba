"""Sigmoid focal loss (RetinaNet): BCE down-weighted on well-classified examples."""
from ...nn import functional as F

__all__ = ["sigmoid_focal_loss"]


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    """alpha balances positives/negatives (< 0 disables it); gamma focuses on hard examples."""
    p = inputs.sigmoid()
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction "
                     "modes: 'none', 'mean', 'sum'")
