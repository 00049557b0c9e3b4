"""A model's weights as numpy arrays, from and to files and Models: a training checkpoint's
average model z (the blobs under ``z/``), or a ``Model.save`` file (plain names).

Export (ONNX) and interop (PyTorch) read weights through here, so both take either file.
"""
import os

import numpy as np

from crossbow import _native

CHECKPOINT_FILE = "checkpoint.cbt"  # the C++ loop's name for it (train/checkpoint.cc)


def checkpoint_path(path):
    """A checkpoint file, or the one in a checkpoint folder; FileNotFoundError if none."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, CHECKPOINT_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no checkpoint at '{path}'")
    return path


def is_training_checkpoint(path):
    """Whether the file at `path` is a training checkpoint (else a Model.save file)."""
    return any(k.startswith("z/") for k in _native.load().load_tensors(checkpoint_path(path)))


def read(path, builder):
    """{blob: array} of every parameter and state blob of ``builder``'s net in the file at
    ``path``: z's from a checkpoint, else the plain names of a Model.save file."""
    path = checkpoint_path(path)
    tensors = _native.load().load_tensors(path)
    names = list(builder.params) + list(builder.state)
    prefix = "z/" if any(k.startswith("z/") for k in tensors) else ""
    missing = [n for n in names if prefix + n not in tensors]
    if missing:
        what = "a training checkpoint" if prefix else "a Model.save file"
        raise ValueError(f"'{path}' ({what}) has no blob '{prefix}{missing[0]}' of net "
                         f"'{builder.name}' ({len(missing)} of {len(names)} missing): "
                         f"is it a checkpoint of another net?")
    out = {}
    for n in names:
        value = tensors[prefix + n]
        if tuple(value.shape) != tuple(builder.shapes[n]):
            raise ValueError(f"'{path}': blob '{prefix}{n}' has shape {tuple(value.shape)}, "
                             f"net '{builder.name}' expects {tuple(builder.shapes[n])}")
        out[n] = np.ascontiguousarray(value, dtype=np.float32)
    return out


def of_model(model):
    """{blob: array} of a Model's parameters and state, in the builder's order."""
    return {n: np.asarray(model.learner.get(n), dtype=np.float32)
            for n in list(model.builder.params) + list(model.builder.state)}


def into_model(model, arrays):
    """Sets every parameter and state blob of ``model`` from ``arrays`` (checked by
    Model.set_param: name and shape); Model.load_weights reads them from a file."""
    for name, value in arrays.items():
        model.set_param(name, np.ascontiguousarray(value, dtype=np.float32))
    return model
