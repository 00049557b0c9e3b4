"""Imagenette (or any JPEG folder of one class per sub-folder) for the PyTorch peer of
bench_train.py hardware with an ImageNet net: torchvision's ImageFolder decoding the JPEGs in
the DataLoader's workers, with the training transform of Crossbow's `imagenet` preset
(docs/design/data.md: RandomResizedCrop(S, scale (0.08, 1)), mirror, ImageNet's mean and std),
as Crossbow's loader decodes them from its encoded LMDB. Needs torch and torchvision."""
import os

import torch
from torchvision import datasets, transforms as T

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def train_loader(folder, size, batch, workers, min_area=0.08):
    """Shuffled batches of `folder`/train at `size` pixels a side (the last partial one
    dropped), `workers` loader processes; crops of `min_area` to all of an image's area."""
    augment = T.Compose([T.RandomResizedCrop(size, scale=(min_area, 1.0)),
                         T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)])
    images = datasets.ImageFolder(os.path.join(folder, "train"), augment)
    return torch.utils.data.DataLoader(images, batch, shuffle=True, drop_last=True,
                                       num_workers=workers, persistent_workers=workers > 0)
