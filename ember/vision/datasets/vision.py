"""VisionDataset: root + transform/target_transform, the base of every torchvision dataset."""
import os

from ...utils.data import Dataset

__all__ = ["VisionDataset", "StandardTransform"]


class StandardTransform:
    """Applies transform to the input and target_transform to the target."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        return _apply_transforms(self.transform, self.target_transform, input, target)


def _apply_transforms(transform, target_transform, input, target):
    """The one place a sample and its target meet their (optional) transforms."""
    if transform is not None:
        input = transform(input)
    if target_transform is not None:
        target = target_transform(target)
    return input, target


class VisionDataset(Dataset):
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_transforms = transforms is not None
        has_separate = transform is not None or target_transform is not None
        if has_transforms and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as "
                             "argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index):
        raise NotImplementedError

    def _transform_pair(self, sample, target):
        """transform / target_transform applied as torchvision's datasets do (not `transforms`)."""
        return _apply_transforms(self.transform, self.target_transform, sample, target)

    def __len__(self):
        raise NotImplementedError

    def extra_repr(self):
        return ""

    def __repr__(self):
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if self.transforms is not None:
            body += [repr(self.transforms)]
        lines = [f"Dataset {self.__class__.__name__}"] + [" " * self._repr_indent + line
                                                          for line in body]
        return "\n".join(lines)
