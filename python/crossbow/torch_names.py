"""Which PyTorch state_dict key holds each parameter and statistic of a zoo net.

Twins: torchvision's ``resnet18``, ``resnet34`` and ``resnet50`` (101 and 152 alike) for the
ImageNet ResNets, timm's naming for their D variants (``resnet18d``, ``resnet50d``; the twin in
``python/crossbow/torch_twins.py``); ``python/crossbow/torch_resnet.py`` for the CIFAR ResNets; ``python/crossbow/torch_twins.py``
for VGG-16 (torchvision's ``vgg16_bn`` features, then one Linear named ``classifier``) and LeNet;
fastai's own ``xresnet18``, ... ``xse_resnext50`` (``act_cls=Mish`` for ``_mish``, ``sa=True``
for ``_sa``) for the xresnet family.
A layer maps to a module path; its blobs map to that module's tensors:

    Conv, FC:      _w -> weight, _b -> bias
    SpatialBN:     _s -> weight, _b -> bias, _rm -> running_mean, _rv -> running_var
    SpectralNorm:  _w -> weight_orig, _u -> weight_u, _v -> weight_v (torch's spectral_norm)
    Mul:           _g -> gamma (SimpleSelfAttention's gain)
"""
import re

SUFFIXES = {"Conv": (("_w", "weight"), ("_b", "bias")),
            "FC": (("_w", "weight"), ("_b", "bias")),
            "SpatialBN": (("_s", "weight"), ("_b", "bias"), ("_rm", "running_mean"),
                          ("_rv", "running_var")),
            "SpectralNorm": (("_w", "weight_orig"), ("_u", "weight_u"), ("_v", "weight_v")),
            "Mul": (("_g", "gamma"),)}


def _cifar_resnet(depth):
    n = (depth - 2) // 6

    def module(layer):
        if layer in ("conv1_conv", "conv1_bn"):
            return "conv" if layer.endswith("conv") else "bn"
        m = re.fullmatch(r"res(\d)_(\d+)([ab])_(conv|bn)", layer)
        if m:
            stage, block, which, kind = int(m[1]), int(m[2]), m[3], m[4]
            index = (stage - 1) * n + block - 1
            return f"layers.{index}.{'c' if kind == 'conv' else 'b'}{'1' if which == 'a' else '2'}"
        return "fc" if layer == "fc" else None
    return module


def _imagenet_resnet(layer):
    if layer in ("conv1_conv", "conv1_bn"):
        return "conv1" if layer.endswith("conv") else "bn1"
    m = re.fullmatch(r"res(\d)_(\d+)(a|b|c|_proj)_(conv|bn)", layer)
    if m:
        where = f"layer{int(m[1]) - 1}.{int(m[2]) - 1}"
        if m[3] == "_proj":
            return f"{where}.downsample.{0 if m[4] == 'conv' else 1}"
        return f"{where}.{m[4]}{'abc'.index(m[3]) + 1}"
    return "fc" if layer == "fc" else None


# ResNet-D (timm): the deep stem is conv1 = Sequential(conv, bn, relu, conv, bn, relu, conv)
# with bn1 after it, and a projection shortcut is downsample = Sequential(pool, conv, bn).
_DEEP_STEM = {"conv1a_conv": "conv1.0", "conv1a_bn": "conv1.1", "conv1b_conv": "conv1.3",
              "conv1b_bn": "conv1.4", "conv1c_conv": "conv1.6", "conv1c_bn": "bn1"}


def _resnet_d(layer):
    if layer in _DEEP_STEM:
        return _DEEP_STEM[layer]
    path = _imagenet_resnet(layer)
    m = re.fullmatch(r"(.*\.downsample)\.(\d)", path or "")
    return f"{m[1]}.{int(m[2]) + 1}" if m else path


def _vgg(builder):
    """torchvision's vgg16_bn numbering: Conv2d, BatchNorm2d, ReLU per layer, MaxPool2d."""
    places, index = {}, 0
    for name, op_type, _, _ in builder.layers:
        if op_type in ("Conv", "SpatialBN"):
            places[name] = f"features.{index}"
        if op_type in ("Conv", "SpatialBN", "Relu", "MaxPool"):
            index += 1
    places["fc"] = "classifier"
    return places.get


def _xresnet(builder):
    """fastai's XResNet, an nn.Sequential: the stem's ConvLayers 0-2 (conv, bn), the max pool 3,
    stages 4-7 of ResBlocks (convpath: ConvLayers, then SEModule's layers and
    SimpleSelfAttention; idpath: [AvgPool,] ConvLayer), then pool, flatten, dropout, Linear 11."""
    from crossbow.nets.xresnet import DEPTHS, parse
    expansion, _, se = DEPTHS[parse(builder.name)[0]]
    branch = 2 if expansion == 1 else 3  # ConvLayers in a residual branch

    def module(layer):
        m = re.fullmatch(r"stem(\d)_(conv|bn)", layer)
        if m:
            return f"{int(m[1]) - 1}.{'01'[m[2] == 'bn']}"
        m = re.fullmatch(r"stage(\d)_(\d+)(?:([abc])|_proj|_se_(reduce|expand)|_sa_(sn|gain))"
                         r"(?:_(conv|bn))?", layer)
        if not m:
            return "11" if layer == "fc" else None
        stage, index = int(m[1]), int(m[2]) - 1
        where, kind = f"{3 + stage}.{index}", "01"[m[6] == "bn"]
        if m[3]:
            return f"{where}.convpath.{'abc'.index(m[3])}.{kind}"
        if m[4]:
            return f"{where}.convpath.{branch}.layers.{1 if m[4] == 'reduce' else 2}.0"
        if m[5]:
            attention = f"{where}.convpath.{branch + se}"
            return f"{attention}.conv" if m[5] == "sn" else attention
        strided = stage > 1 and index == 0
        return f"{where}.idpath.{int(strided)}.{kind}"
    return module


def twin_shape(builder, blob):
    """The shape of ``blob``'s tensor in the twin: SimpleSelfAttention's convolution is 1-D in
    fastai ([C, C, 1]) and 2-D here ([C, C, 1, 1]); every other tensor has the blob's shape."""
    shape = tuple(builder.shapes[blob])
    return shape[:3] if blob.endswith("_sa_sn_w") else shape


def _lenet(layer):
    return layer if layer in ("conv1", "conv2", "ip1", "ip2") else None


def _module_rule(builder):
    name = builder.name
    if name == "lenet":
        return _lenet
    if name.startswith("vgg"):
        return _vgg(builder)
    if name.startswith(("xresnet", "xse_resnext")):
        return _xresnet(builder)
    m = re.fullmatch(r"resnet(\d+)(d?)(?:_maxblur)?", name)  # MaxBlurPool has no parameters
    if m and m[2]:
        return _resnet_d
    if m and builder.input_shape == (3, 32, 32):
        return _cifar_resnet(int(m[1]))
    if m:
        return _imagenet_resnet
    raise ValueError(f"no PyTorch twin is known for net '{name}': pass names={{blob: key}}")


def mapping(builder):
    """{Crossbow blob: PyTorch state_dict key} for every parameter and state blob."""
    module = _module_rule(builder)
    out = {}
    for layer, op_type, _, _ in builder.layers:
        blobs = [(layer + suffix, tensor) for suffix, tensor in SUFFIXES.get(op_type, ())
                 if layer + suffix in builder.shapes]
        if not blobs:
            continue
        path = module(layer)
        if path is None:
            raise ValueError(f"net '{builder.name}': layer '{layer}' ({op_type}) has no "
                             f"PyTorch module in the twin's naming")
        for blob, tensor in blobs:
            out[blob] = f"{path}.{tensor}"
    blobs = set(builder.params) | set(builder.state)
    if set(out) != blobs:
        left = sorted(blobs - set(out))
        raise ValueError(f"net '{builder.name}': blob(s) {', '.join(left)} have no PyTorch name")
    return out
