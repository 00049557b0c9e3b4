"""The model zoo: ``build("resnet32")`` returns a ready Model, ``builder(...)`` its net.

Nets: LeNet (MNIST), the CIFAR ResNets of He et al. 2016 (20/32/56/110), VGG-16 with
batch norm (CIFAR), and the ImageNet ResNet-18, ResNet-34 and ResNet-50 v1.5 and the ResNet-D
variants resnet18d and resnet50d (deep stem, average-pool shortcuts), and those with
MaxBlurPool in the stem, resnet18d_maxblur and resnet50d_maxblur (anti-aliased downsampling,
Zhang 2019), which take ``input_size`` (224 by default). The ResNets take
``zero_init_residual`` (each residual branch ends in a batch norm of scale 0 at the start, as
torchvision's argument of that name). fastai's xresnet family (nets/xresnet.py): xresnet18,
xresnet34, xresnet50 and xse_resnext50, and with Mish and self-attention (``_mish_sa``, the
Imagenette leaderboard's net) xresnet18_mish_sa and xse_resnext50_mish_sa; they start every
residual branch at scale 0, as fastai does.
"""

from crossbow.model import Model
from crossbow.names import did_you_mean

# fastai's nets, as fastai builds them; checked against fastai's own objects
FASTAI = ("xresnet18", "xresnet34", "xresnet50", "xse_resnext50", "xresnet18_mish_sa",
          "xse_resnext50_mish_sa")
NAMES = ("lenet", "resnet20", "resnet32", "resnet56", "resnet110", "vgg16", "resnet18",
         "resnet34", "resnet50", "resnet18d", "resnet50d", "resnet18d_maxblur",
         "resnet50d_maxblur") + FASTAI
# 1000 classes, any input_size (the -d variants and fastai's: multiples of 32); the others: 10
IMAGENET = ("resnet18", "resnet34", "resnet50", "resnet18d", "resnet50d", "resnet18d_maxblur",
            "resnet50d_maxblur") + FASTAI
# Each net's input preset (crossbow.data.ImageDB, `--augment`): its data set's pipeline.
PRESETS = dict({name: "cifar" for name in NAMES}, lenet="mnist",
               **{name: "imagenet" for name in IMAGENET})


def builder(name, num_classes=None, input_size=None, zero_init_residual=False):
    """The ModelBuilder of a zoo net, with its input preset as ``preset``; num_classes defaults
    to its dataset's (10, or 1000), and input_size (ImageNet nets only) to 224."""
    m = _builder(name, num_classes, input_size, bool(zero_init_residual))
    m.preset = PRESETS[name]
    return m


def _builder(name, num_classes, input_size, zero_init_residual):
    if name not in NAMES:
        raise ValueError(f"unknown net '{name}'{did_you_mean(name, NAMES)} (nets: "
                         f"{', '.join(NAMES)})")
    classes = (1000 if name in IMAGENET else 10) if num_classes is None else int(num_classes)
    if classes < 2:
        raise ValueError(f"num_classes must be >= 2, got {classes}")
    if input_size is not None and name not in IMAGENET:
        raise ValueError(f"{name} has a fixed input size; input_size (--input-size) is for "
                         f"{', '.join(IMAGENET)}")
    if zero_init_residual and name in FASTAI:
        raise ValueError(f"{name} starts every residual branch at scale 0 already (fastai's "
                         f"init); zero_init_residual (--zero-init-residual) is for the ResNets")
    if zero_init_residual and not name.startswith("resnet"):
        raise ValueError(f"{name} has no residual blocks; zero_init_residual "
                         f"(--zero-init-residual) is for the ResNets")
    if name in FASTAI:
        from crossbow.nets.xresnet import xresnet
        return xresnet(name, classes, input_size or 224)
    if name in IMAGENET:
        from crossbow.nets.imagenet_resnet import resnet
        base, _, extra = name.partition("_")
        depth, variant = base[len("resnet"):].rstrip("d"), "d" if base.endswith("d") else ""
        return resnet(int(depth), classes, input_size or 224, zero_init_residual, variant,
                      max_blur_pool=extra == "maxblur")
    if name == "lenet":
        from crossbow.nets.lenet import lenet
        return lenet(classes)
    if name == "vgg16":
        from crossbow.nets.vgg import vgg16
        return vgg16(classes)
    from crossbow.nets.cifar_resnet import resnet
    return resnet(int(name[len("resnet"):]), classes, zero_init_residual)


def build(name, num_classes=None, input_size=None, zero_init_residual=False, **model_kwargs):
    """A Model of a zoo net; model_kwargs go to Model (lr, momentum, weight_decay, ...)."""
    return Model(builder(name, num_classes, input_size, zero_init_residual), **model_kwargs)
