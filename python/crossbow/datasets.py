"""Readers for datasets kept as plain files: MNIST's IDX format (gzipped or not); the input
presets' statistics, which the loader's presets alone hold."""

import gzip
import os
import struct

import numpy as np

from crossbow import _native


def preset_statistics(preset):
    """(mean, std), per channel in [0, 1] units, of an input preset (cifar, imagenet, mnist),
    from the loader's presets (data/presets.cc)."""
    stats = _native.load().input_preset_statistics(preset)
    return stats["mean"], stats["std"]

_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path):
    """Returns the array stored in an IDX file, checking its header against its size."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path}: not an IDX file (bad magic number)")
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4 : 4 + 4 * ndim])
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    body = raw[4 + 4 * ndim :]
    expected = int(np.prod(dims)) * dtype.itemsize
    if len(body) != expected:
        raise ValueError(f"{path}: header promises {expected} bytes of data, file has {len(body)}")
    return np.frombuffer(body, dtype=dtype).reshape(dims)


def load_mnist(folder):
    """(train_images, train_labels, test_images, test_labels) from the four IDX files in
    `folder`, images as float32 [N, 1, 28, 28] in [0, 1], labels as int32. (Standardising with
    MNIST's statistics is the loader's `mnist` preset, data/presets.cc.)"""

    def find(stem):
        for name in (stem + ".gz", stem):
            path = os.path.join(folder, name)
            if os.path.exists(path):
                return path
        raise FileNotFoundError(f"{folder}: no {stem}[.gz]")

    def images(stem):
        return read_idx(find(stem)).astype(np.float32)[:, None, :, :] / 255.0

    def labels(stem):
        return read_idx(find(stem)).astype(np.int32)

    return (
        images("train-images-idx3-ubyte"),
        labels("train-labels-idx1-ubyte"),
        images("t10k-images-idx3-ubyte"),
        labels("t10k-labels-idx1-ubyte"),
    )
