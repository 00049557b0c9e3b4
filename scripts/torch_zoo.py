"""Each zoo net's PyTorch twin, for the benchmarks' peers (bench_step.py, bench_train.py): the
CIFAR ResNets of torch_resnet.py, torchvision's ImageNet ResNets (Crossbow's resnet18, resnet34
and resnet50 v1.5 are those nets: the same parameter count, tests/python/test_nets.py), and the
VGG-16, LeNet and ResNet-D twins of torch_twins.py. Importing this needs no torch; twin() does.
"""


def _cifar(depth):
    def make(classes):
        from torch_resnet import cifar_resnet
        return cifar_resnet(depth, classes)
    return make


def _torchvision(name):
    def make(classes):
        import torchvision
        return getattr(torchvision.models, name)(num_classes=classes)
    return make


def _twins(name):
    def make(classes):
        import torch_twins
        return getattr(torch_twins, name)(classes)
    return make


TWINS = {**{f"resnet{d}": _cifar(d) for d in (20, 32, 56, 110)},
         **{n: _torchvision(n) for n in ("resnet18", "resnet34", "resnet50")},
         **{n: _twins(n) for n in ("vgg16", "lenet", "resnet18d", "resnet50d",
                                   "resnet18d_maxblur", "resnet50d_maxblur")}}


def check(net):
    """A ValueError naming the nets with a twin where `net` has none."""
    if net not in TWINS:
        raise ValueError(f"net '{net}' has no PyTorch twin to compare with; nets with one: "
                         f"{', '.join(TWINS)}")


def twin(net, classes):
    """The PyTorch model of zoo net `net` with `classes` outputs."""
    check(net)
    return TWINS[net](classes)


def param_count(model):
    return sum(p.numel() for p in model.parameters())
