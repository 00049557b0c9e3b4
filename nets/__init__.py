"""The model zoo: ``build("resnet32")`` returns a ready Model, ``builder(...)`` its net.

Nets: LeNet (MNIST), the CIFAR ResNets of He et al. 2016 (20/32/56/110), VGG-16 with
batch norm (CIFAR), and ResNet-50 v1.5 (ImageNet).
"""
import difflib

from crossbow.model import Model

NAMES = ("lenet", "resnet20", "resnet32", "resnet56", "resnet110", "vgg16", "resnet50")
_DEFAULT_CLASSES = {"resnet50": 1000}  # the others: 10 (MNIST, CIFAR-10)


def builder(name, num_classes=None):
    """The ModelBuilder of a zoo net; num_classes defaults to its dataset's (10, or 1000)."""
    if name not in NAMES:
        near = difflib.get_close_matches(name, NAMES, n=1)
        hint = f"; did you mean '{near[0]}'?" if near else ""
        raise ValueError(f"unknown net '{name}'{hint} (nets: {', '.join(NAMES)})")
    classes = _DEFAULT_CLASSES.get(name, 10) if num_classes is None else int(num_classes)
    if classes < 2:
        raise ValueError(f"num_classes must be >= 2, got {classes}")
    if name == "lenet":
        from crossbow.nets.lenet import lenet
        return lenet(classes)
    if name == "vgg16":
        from crossbow.nets.vgg import vgg16
        return vgg16(classes)
    if name == "resnet50":
        from crossbow.nets.imagenet_resnet import resnet
        return resnet(50, classes)
    from crossbow.nets.cifar_resnet import resnet
    return resnet(int(name[len("resnet"):]), classes)


def build(name, num_classes=None, **model_kwargs):
    """A Model of a zoo net; model_kwargs go to Model (lr, momentum, weight_decay, ...)."""
    return Model(builder(name, num_classes), **model_kwargs)
