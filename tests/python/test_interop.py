"""PyTorch weights in and out: every zoo net against its twin (torchvision's resnet50,
python/crossbow/torch_resnet.py, python/crossbow/torch_twins.py), and a net whose batch norm has a
non-default epsilon against its own; log-probabilities within 1e-4 both ways (each class's
probability within 0.01% of itself); a missing, unexpected or misshapen tensor is named."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import crossbow
from crossbow import _native, interop, torch_names
from conftest import log_probability_gap, small_variance_bn_net

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
    import torchvision
    from crossbow import torch_resnet, torch_twins
    if net in ("lenet", "vgg16") or net.startswith(("resnet18d", "resnet50d")):
        return getattr(torch_twins, net)()
    if net in crossbow.nets.IMAGENET:
        return getattr(torchvision.models, net)()
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
    """The largest difference between the two nets' log-probabilities on one input, and how far
    ours spread (a net whose output hardly depends on its input would agree with anything)."""
    import torch
    x = np.random.default_rng(seed).normal(0, 1, (2,) + model.input_shape).astype(np.float32)
    with torch.no_grad():
        theirs = torch.softmax(twin(torch.from_numpy(x)).double(), dim=1).numpy()
    ours = model.predict(x).astype(np.float64)
    return log_probability_gap(theirs, ours), float(np.ptp(np.log(np.maximum(ours, 1e-45))))


def round_trip(net):
    """In and out against the twin: from_torch(twin) then predict; to_torch into another twin
    (other weights, all replaced) then forward. Run in a process that imported torch first."""
    twin = _randomise(_twin(net), 0)
    model = interop.from_torch(crossbow.nets.build(net), twin.state_dict())
    back = _randomise(_twin(net), 2)
    back.load_state_dict(interop.to_torch(model), strict=True)
    return {"in": _gap(model, twin, 1), "out": _gap(model, back.eval(), 3)}


# conftest.small_variance_bn_net's blobs under the names of _small_variance_twin's tensors.
_SMALL_VARIANCE_NAMES = {"c_w": "0.weight", "c_b": "0.bias", "bn_s": "1.weight", "bn_b": "1.bias",
                         "bn_rm": "1.running_mean", "bn_rv": "1.running_var",
                         "fc_w": "5.weight", "fc_b": "5.bias"}


def _small_variance_twin(epsilon, seed):
    import torch
    nn = torch.nn
    twin = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8, eps=epsilon), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        twin[1].running_var.uniform_(1e-4, 1e-3, generator=g)
        twin[1].running_mean.normal_(0, 0.01, generator=g)
        twin[1].weight.uniform_(0.05, 0.15, generator=g)
    return twin.eval()


def small_variance_round_trip(epsilon, twin_epsilon):
    """round_trip for conftest.small_variance_bn_net with `epsilon` and a twin with
    `twin_epsilon`: with both the same, epsilon counts alike on both sides."""
    twin = _small_variance_twin(twin_epsilon, 0)
    model = interop.from_torch(small_variance_bn_net(epsilon), twin, names=_SMALL_VARIANCE_NAMES)
    back = _small_variance_twin(twin_epsilon, 2)
    ours = small_variance_bn_net(epsilon)
    back.load_state_dict(interop.to_torch(ours, _SMALL_VARIANCE_NAMES), strict=True)
    return {"in": _gap(model, twin, 1), "out": _gap(ours, back.eval(), 3)}


_ROUND_TRIP = """
import json, sys
import torch  # before crossbow._C (see _torch_importable)
sys.path[:0] = [{tests!r}, {python!r}]
import test_interop
print(json.dumps(test_interop.{call}))
"""


def _run_with_torch(call):
    code = _ROUND_TRIP.format(tests=os.path.dirname(os.path.abspath(__file__)),
                              python=os.path.join(ROOT, "python"), call=call)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _assert_agree(gaps, what):
    for way in ("in", "out"):
        gap, spread = gaps[way]
        assert gap < 1e-4, f"{what} {way}: log-probabilities differ by {gap}"
        assert spread > 1e-3, f"{what} {way}: the output hardly depends on the input"


# fastai's nets have fastai itself as the twin: tests/python/test_xresnet_fastai.py, in the
# peer's venv, takes them both ways
@needs_torch
@pytest.mark.parametrize("net", [n for n in crossbow.nets.NAMES if n not in crossbow.nets.FASTAI])
def test_from_torch_then_to_torch_agree_with_the_twin(net):
    _assert_agree(_run_with_torch(f"round_trip({net!r})"), net)


@needs_torch
def test_a_non_default_batch_norm_epsilon_counts_as_in_pytorch():
    _assert_agree(_run_with_torch("small_variance_round_trip(1e-3, 1e-3)"), "epsilon 1e-3")


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
