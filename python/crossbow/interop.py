"""PyTorch weights in and out of a zoo net: ``from_torch(model, state_dict)`` and
``to_torch(model)``, by the twin's names (torch_names.py): parameters and batch-norm running
statistics. A missing, unexpected or misshapen tensor is an error that names it.

    import torchvision
    model = crossbow.nets.build("resnet50")
    crossbow.interop.from_torch(model, torchvision.models.resnet50(weights=...).state_dict())
    twin.load_state_dict(crossbow.interop.to_torch(model))
"""

import numpy as np

from crossbow import torch_names, weights
from crossbow.names import did_you_mean

# Kept by PyTorch's BatchNorm2d, unknown to Crossbow (its statistics use a fixed momentum).
IGNORED = ("num_batches_tracked",)


def _array(value, key):
    if hasattr(value, "detach"):  # a torch.Tensor
        value = value.detach().cpu().float().numpy()
    if not isinstance(value, np.ndarray):
        raise TypeError(f"state_dict['{key}']: expected a torch.Tensor or numpy array, got "
                        f"{type(value).__name__}")
    return value


def from_torch(model, state_dict, names=None, strict=True):
    """Sets every parameter and statistic of the Crossbow ``model`` from a PyTorch
    ``state_dict`` (or an nn.Module) of its twin; returns ``model``. ``names``: {blob: key}
    for nets without a known twin. ``strict``: keys the net has no use for are errors."""
    if hasattr(state_dict, "state_dict"):
        state_dict = state_dict.state_dict()
    names = names or torch_names.mapping(model.builder)
    keys = list(state_dict)
    arrays = {}
    for blob, key in names.items():
        if key not in state_dict:
            raise KeyError(f"the state_dict has no '{key}' (for {model.builder.name}'s "
                           f"'{blob}'){did_you_mean(key, keys)}")
        value = _array(state_dict[key], key)
        expected = torch_names.twin_shape(model.builder, blob)
        if tuple(value.shape) != expected:
            raise ValueError(f"state_dict['{key}'] has shape {tuple(value.shape)}, "
                             f"{model.builder.name}'s '{blob}' is {expected}")
        arrays[blob] = value.reshape(model.builder.shapes[blob])
    if strict:
        used = set(names.values())
        extra = [k for k in keys if k not in used and k.rsplit(".", 1)[-1] not in IGNORED]
        if extra:
            raise ValueError(f"the state_dict has {len(extra)} tensor(s) that "
                             f"{model.builder.name} has no place for, first '{extra[0]}' "
                             f"(another net? pass strict=False to ignore them)")
    return weights.into_model(model, arrays)


def to_torch(model, names=None):
    """The Crossbow ``model``'s weights as an OrderedDict of torch tensors under its twin's
    names (with BatchNorm2d's num_batches_tracked, so load_state_dict(strict=True) takes it)."""
    try:
        import torch
    except ImportError as e:
        raise ImportError("to_torch needs PyTorch: pip install torch") from e
    import collections
    names = names or torch_names.mapping(model.builder)
    arrays = weights.of_model(model)
    out = collections.OrderedDict()
    for blob, key in names.items():
        value = np.array(arrays[blob], dtype=np.float32)
        out[key] = torch.from_numpy(value.reshape(torch_names.twin_shape(model.builder, blob)))
        if key.endswith(".running_var"):
            out[key[:-len("running_var")] + "num_batches_tracked"] = torch.tensor(0)
    return out
