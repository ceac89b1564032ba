"""torchvision.utils: tile a batch of images into one grid, save tensors as image files,
draw boxes and masks on images."""
import math

from .. import Tensor, cat, stack, uint8

from ._draw import draw_bounding_boxes, draw_segmentation_masks

__all__ = ["make_grid", "save_image", "draw_bounding_boxes", "draw_segmentation_masks"]


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """[B, C, H, W] (or a list of [C, H, W]) -> one [C, H', W'] image, nrow images per row."""
    if isinstance(tensor, list):
        tensor = stack(tensor, dim=0)
    if not isinstance(tensor, Tensor):
        raise TypeError("tensor should be of type torch.Tensor")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.shape[0] == 1:
            tensor = cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.shape[1] == 1:
        tensor = cat((tensor, tensor, tensor), 1)
    if normalize is True:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max "
                            "are numbers")

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t):
            if value_range is not None:
                norm_ip(t, value_range[0], value_range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each is True:
            for t in tensor:
                norm_range(t)
        else:
            norm_range(tensor)
    if tensor.shape[0] == 1:
        return tensor.squeeze(0)
    nmaps = tensor.shape[0]
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.shape[2] + padding), int(tensor.shape[3] + padding)
    grid = tensor.new_full((tensor.shape[1], height * ymaps + padding,
                            width * xmaps + padding), pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k += 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """make_grid, scale [0, 1] to bytes (round half up), write with pillow."""
    from PIL import Image
    grid = make_grid(tensor, **kwargs)
    ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(uint8).numpy()
    im = Image.fromarray(ndarr)
    im.save(fp, format=format)
