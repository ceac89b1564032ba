"""FakeData: random images that are the same for the same index (seeded per item)."""
from ... import get_rng_state, manual_seed, randint, randn, set_rng_state
from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = get_rng_state()
        manual_seed(index + self.random_offset)
        img = randn(*self.image_size)
        target = randint(0, self.num_classes, size=(1,))[0]
        set_rng_state(rng_state)
        from ..transforms.functional import to_pil_image
        img = to_pil_image(img)
        img, target = self._transform_pair(img, target)
        return img, target.item()

    def __len__(self):
        return self.size
