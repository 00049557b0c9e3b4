"""Each zoo net's PyTorch twin, for the benchmarks' peers (bench_step.py, bench_train.py): the
CIFAR ResNets of torch_resnet.py, torchvision's ImageNet ResNets (Crossbow's resnet18, resnet34
and resnet50 v1.5 are those nets: the same parameter count, tests/python/test_nets.py), and the
VGG-16, LeNet and ResNet-D twins of torch_twins.py, and fastai's own xresnets for the xresnet
family (fastai in the peer's venv). Importing this needs no torch; twin() does.
"""
from crossbow.nets import FASTAI


def _cifar(depth):
    def make(classes):
        from crossbow.torch_resnet import cifar_resnet
        return cifar_resnet(depth, classes)
    return make


def _torchvision(name):
    def make(classes):
        import torchvision
        return getattr(torchvision.models, name)(num_classes=classes)
    return make


def _twins(name):
    def make(classes):
        from crossbow import torch_twins
        return getattr(torch_twins, name)(classes)
    return make


def _fastai(name):
    def make(classes):
        from fastai.layers import Mish
        from fastai.vision.models import xresnet
        from crossbow.nets.xresnet import parse
        base, act, sa = parse(name)
        return getattr(xresnet, base)(n_out=classes, sa=sa,
                                      act_cls=Mish if act == "mish" else xresnet.nn.ReLU)
    return make


RESNET_D = ("resnet18d", "resnet50d", "resnet18d_maxblur", "resnet50d_maxblur")
IMAGENET = ("resnet18", "resnet34", "resnet50") + RESNET_D + FASTAI
TWINS = {**{f"resnet{d}": _cifar(d) for d in (20, 32, 56, 110)},
         **{n: _torchvision(n) for n in IMAGENET[:3]},
         **{n: _twins(n) for n in ("vgg16", "lenet") + RESNET_D},
         **{n: _fastai(n) for n in FASTAI}}


def check(net):
    """A ValueError naming the nets with a twin where `net` has none."""
    if net not in TWINS:
        raise ValueError(f"net '{net}' has no PyTorch twin to compare with; nets with one: "
                         f"{', '.join(TWINS)}")


def twin(net, classes):
    """The PyTorch model of zoo net `net` with `classes` outputs."""
    check(net)
    return TWINS[net](classes)


def shape(net, input_size=None):
    """The input [C, H, W] of the net, as Crossbow's zoo has it (the peer cannot ask it):
    ImageNet nets 224 px unless `input_size`, LeNet 1x28x28, the others 3x32x32."""
    check(net)
    if net == "lenet":
        return [1, 28, 28]
    side = (input_size or 224) if net in IMAGENET else 32
    return [3, side, side]


def param_count(model):
    return sum(p.numel() for p in model.parameters())
