"""CIFAR-10 for the PyTorch peer of bench_train.py (hardware and statistical runs): the JPEG
folders decoded once into memory, augmented as Crossbow's loader does, and scored with
Crossbow's rule. Needs torch (and torchvision to read the JPEG folders); runs under the peer's
Python. gpu_tta.sh's PyTorch side takes its statistics and scoring from here too."""
import os

import numpy as np
import torch
import torch.nn.functional as F

MEAN = torch.tensor([0.4914, 0.4822, 0.4465]).view(3, 1, 1)
STD = torch.tensor([0.2470, 0.2435, 0.2616]).view(3, 1, 1)


def pixels(folder, work, split):
    """The split's images decoded once into uint8 NCHW (cached in `work`) and labels."""
    cache = os.path.join(work, f"torch_{split}_pixels.npz")
    if not os.path.exists(cache):
        import torchvision  # here alone: the GPU machine's PyTorch may come without it
        images = torchvision.datasets.ImageFolder(os.path.join(folder, split))
        x = np.stack([np.asarray(images.loader(p).convert("RGB")) for p, _ in images.samples])
        np.savez(cache, x=x.transpose(0, 3, 1, 2), y=np.array(images.targets, np.int64))
    d = np.load(cache)
    return torch.from_numpy(d["x"]), torch.from_numpy(d["y"])


AUGMENTS = ("sample", "batch")  # the training loader's augmentation: per image, or per batch


class Augmented(torch.utils.data.Dataset):
    """Pad 4, random 32x32 crop, mirror, normalise: on decoded pixels, as Crossbow's loader."""
    def __init__(self, x, y, train):
        self.x, self.y, self.train = x, y, train

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        img = self.x[i]
        if self.train:
            img = F.pad(img, (4, 4, 4, 4))
            r, c = np.random.randint(0, 9, 2)
            img = img[:, r:r + 32, c:c + 32]
            if np.random.rand() < 0.5:
                img = img.flip(2)
        return (img.float() / 255 - MEAN) / STD, self.y[i]


def crop_and_mirror(x, rows, cols, mirror):
    """Pad 4, then image i's 32x32 window at (rows[i], cols[i]) in 0..8, mirrored where
    mirror[i], of the uint8 batch x [N, C, 32, 32], by one gather; normalised as Augmented."""
    n = len(x)
    padded = F.pad(x, (4, 4, 4, 4))
    r = (rows[:, None] + torch.arange(32))[:, :, None]
    c = (cols[:, None] + torch.arange(32))[:, None, :]
    c = torch.where(mirror[:, None, None], c.flip(2), c)
    out = padded[torch.arange(n)[:, None, None], :, r, c].permute(0, 3, 1, 2)
    return (out.float() / 255 - MEAN) / STD


class AugmentedBatches(torch.utils.data.Dataset):
    """Augmented's training transform on whole batches: item `indices` (a BatchSampler's list)
    is those images cropped and mirrored at once on the uint8 tensor, one draw each from
    torch's generator, with no per-image Python."""
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, indices):
        n = len(indices)
        rows, cols = torch.randint(0, 9, (2, n))
        return crop_and_mirror(self.x[indices], rows, cols, torch.rand(n) < 0.5), self.y[indices]


def hits(logits, y):
    """Crossbow's scoring rule (core/top_k.h): a tie or a NaN in the row is a miss."""
    target = logits.gather(1, y[:, None])
    others = (logits >= target).sum(1) - 1
    return int(((others < 1) & ~torch.isnan(logits).any(1)).sum())


def train_loader(folder, work, batch, workers, augment="sample"):
    """Shuffled training batches (the last partial one dropped), `workers` loader processes
    (0: in the training process), augmented per image (Augmented) or per batch
    (AugmentedBatches)."""
    x, y = pixels(folder, work, "train")
    if augment not in AUGMENTS:
        raise ValueError(f"augment must be one of {', '.join(AUGMENTS)}, got {augment!r}")
    if augment == "sample":
        return torch.utils.data.DataLoader(Augmented(x, y, True), batch, shuffle=True,
                                           drop_last=True, num_workers=workers,
                                           persistent_workers=workers > 0)
    batches = torch.utils.data.BatchSampler(torch.utils.data.RandomSampler(y), batch,
                                            drop_last=True)
    return torch.utils.data.DataLoader(AugmentedBatches(x, y), sampler=batches, batch_size=None,
                                       num_workers=workers, persistent_workers=workers > 0)


def test_accuracy(model, layout, loader, autocast):
    """Top-1 on the test loader in eval mode under `autocast` (the training precision)."""
    model.eval()
    correct = n = 0
    with torch.no_grad(), autocast:
        for x, y in loader:
            correct += hits(model(layout(x)).float(), y)
            n += len(y)
    model.train()
    return correct / n
