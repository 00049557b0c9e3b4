"""PyTorch weights in and out: every zoo net against its twin (torchvision's resnet50,
scripts/torch_resnet.py, scripts/torch_twins.py), forward outputs within 1e-4 both ways; a
missing, unexpected or misshapen tensor is named."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import crossbow
from crossbow import _native, interop, torch_names

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
def _torch_importable():
    """Whether torch imports in a fresh process (here it may not: a CUDA build of crossbow._C
    loads the system's NCCL, and torch then finds that older one; so each check runs in a
    process that imports torch first)."""
    done = subprocess.run([sys.executable, "-c", "import torch, torchvision"],
                          capture_output=True, text=True, timeout=300)
    return done.returncode == 0


needs_torch = pytest.mark.skipif(not _native.available() or not _torch_importable(),
                                 reason="needs the C++ extension and PyTorch with torchvision "
                                        "(pip install torch torchvision); CI installs neither")


def _twin(net):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import torch_resnet
    import torch_twins
    import torchvision
    if net in crossbow.nets.IMAGENET:
        return getattr(torchvision.models, net)()
    if net in ("lenet", "vgg16"):
        return getattr(torch_twins, net)()
    return torch_resnet.cifar_resnet(int(net[len("resnet"):]))


def _randomise(twin, seed):
    """Batch-norm statistics and affine terms away from 0 and 1, so that each counts."""
    import torch
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in twin.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1, generator=g)
                m.running_var.uniform_(0.5, 2.0, generator=g)
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.normal_(0, 0.1, generator=g)
    return twin.eval()


def _gap(model, twin, seed):
    """The largest difference between the two nets' class probabilities on one input."""
    import torch
    x = np.random.default_rng(seed).normal(0, 1, (2,) + model.input_shape).astype(np.float32)
    with torch.no_grad():
        theirs = torch.softmax(twin(torch.from_numpy(x)), dim=1).numpy()
    ours = model.predict(x)
    return float(np.abs(ours - theirs).max()), float(np.abs(ours - ours.mean()).max())


def round_trip(net):
    """In and out against the twin: from_torch(twin) then predict; to_torch into another twin
    (other weights, all replaced) then forward. Run in a process that imported torch first."""
    twin = _randomise(_twin(net), 0)
    model = interop.from_torch(crossbow.nets.build(net), twin.state_dict())
    back = _randomise(_twin(net), 2)
    back.load_state_dict(interop.to_torch(model), strict=True)
    return {"in": _gap(model, twin, 1), "out": _gap(model, back.eval(), 3)}


_ROUND_TRIP = """
import json, sys
import torch  # before crossbow._C (see _torch_importable)
sys.path[:0] = [{tests!r}, {python!r}]
import test_interop
print(json.dumps(test_interop.round_trip({net!r})))
"""


@needs_torch
@pytest.mark.parametrize("net", crossbow.nets.NAMES)
def test_from_torch_then_to_torch_agree_with_the_twin(net):
    code = _ROUND_TRIP.format(tests=os.path.dirname(os.path.abspath(__file__)),
                              python=os.path.join(ROOT, "python"), net=net)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    gaps = json.loads(done.stdout.strip().splitlines()[-1])
    for way in ("in", "out"):
        gap, spread = gaps[way]
        assert gap < 1e-4, f"{net} {way}: probabilities differ by {gap}"
        assert spread > 1e-3, f"{net} {way}: the output hardly depends on the input"


def _numpy_state(net):
    builder = crossbow.nets.builder(net)
    return {key: np.zeros(builder.shapes[blob], np.float32)
            for blob, key in torch_names.mapping(builder).items()}


def _rename(state):
    state["layers.0.c1.weights"] = state.pop("layers.0.c1.weight")


def _reshape(state):
    state["fc.weight"] = np.zeros((100, 64), np.float32)


@pytest.mark.parametrize("change, error, message", [
    (_rename, KeyError, "no 'layers.0.c1.weight' \\(for resnet20's 'res1_1a_conv_w'\\); did you "
                        "mean 'layers.0.c1.weights'"),
    (_reshape, ValueError, "state_dict\\['fc.weight'\\] has shape \\(100, 64\\), resnet20's "
                           "'fc_w' is \\(10, 64\\)"),
])
def test_a_missing_or_misshapen_tensor_is_named(fake_C, change, error, message):
    state = _numpy_state("resnet20")
    change(state)
    with pytest.raises(error, match=message):
        interop.from_torch(crossbow.nets.build("resnet20"), state)


def test_an_unexpected_tensor_is_named_unless_not_strict(fake_C):
    state = _numpy_state("lenet")
    state["ip3.weight"] = np.zeros((3, 3), np.float32)
    with pytest.raises(ValueError, match="first 'ip3.weight'"):
        interop.from_torch(crossbow.nets.build("lenet"), state)
    model = interop.from_torch(crossbow.nets.build("lenet"), state, strict=False)
    assert model.learner.blobs["ip1_w"].shape == (500, 800)


def test_every_zoo_net_has_a_complete_name_map():
    for net in crossbow.nets.NAMES:
        builder = crossbow.nets.builder(net)
        names = torch_names.mapping(builder)
        assert set(names) == set(builder.params) | set(builder.state)
        assert len(set(names.values())) == len(names), net  # no two blobs on one tensor
