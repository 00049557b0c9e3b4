"""fastai's xresnet family (fastai.vision.models.xresnet, fastai.layers), built as fastai
builds it, for 3 x S x S input (S a multiple of 32, as the ResNet-D nets).

XResNet is ResNet-D (He et al. 2019, "Bag of Tricks"): a stem of three 3x3 conv-BN-act layers
of 32, 32 and 64 channels (the first of stride 2), a 3x3 max pool of stride 2, four stages of
residual blocks (the stride on the 3x3 conv), a shortcut that average-pools (2x2, stride 2)
before its 1x1 conv + BN where the shape changes; then a global average pool and a linear
layer. fastai's init (`init_cnn`): every conv and linear weight kaiming normal, fan_in
(std sqrt(2 / fan_in)), every bias 0, batch-norm scales 1 except the last of each residual
branch, 0 (BatchZero), so that each block starts as its shortcut.

- ``xresnet18``/``34``: basic blocks (two 3x3); ``xresnet50``: bottlenecks (1x1, 3x3, 1x1 of
  4x the width).
- ``xse_resnext50``: bottlenecks of grouped 3x3 convolutions, 32 groups of 4 channels per 64
  of width (ResNeXt 32x4d), and a squeeze-and-excitation module (Hu et al. 2018) at the end of
  each residual branch: a global average pool, a 1x1 conv (bias) to ceil(C // 16 / 8) * 8
  channels, the activation, a 1x1 conv (bias) back to C, a sigmoid, and the branch scaled by it
  per channel.
- ``_mish``: Mish (Misra 2019) wherever the net has ReLU (fastai's ``act_cls=Mish``).
- ``_sa``: one SimpleSelfAttention (fastai's ``sa=True``) after the last block's residual
  branch in the first stage: x [N, C, L] (L = H W) becomes x + gamma (x x^T) (W x), W a 1x1
  convolution under spectral normalisation (one power-iteration step per training run), gamma
  a learned scalar that starts at 0.

With 1000 classes: xresnet18 11,708,744, xresnet34 21,816,904, xresnet50 25,576,264 and
xse_resnext50 27,579,128 parameters; ``_sa`` adds C^2 + 1 (64 or 256 channels).
"""
import math

from crossbow.builder import ModelBuilder

# {net: (expansion, blocks per stage, squeeze-and-excitation and grouped convolutions)}
DEPTHS = {"xresnet18": (1, (2, 2, 2, 2), False), "xresnet34": (1, (3, 4, 6, 3), False),
          "xresnet50": (4, (3, 4, 6, 3), False), "xse_resnext50": (4, (3, 4, 6, 3), True)}
GROUPS, BASE_WIDTH, REDUCTION = 32, 4, 16  # fastai's se_kwargs2 and SEResNeXtBlock
KAIMING = ("MSRAFill", {"mode": "fan_in"})  # nn.init.kaiming_normal_'s defaults


def activation(m, x, act, name):
    """``act``: "relu", "mish" or "sigmoid"."""
    if act == "relu":
        return m.relu(x, name=name)
    return m.op(act.capitalize(), x, name=name)


def conv_layer(m, x, out, kernel, name, act, stride=1, group=1, bn=True, zero_bn=False):
    """fastai's ConvLayer: conv (bias only without batch norm), then BN, then the activation."""
    x = m.conv(x, out, kernel=kernel, stride=stride, pad=kernel // 2, group=group, bias=not bn,
               name=f"{name}_conv", weight_fill=KAIMING)
    if bn:
        x = m.spatial_bn(x, name=f"{name}_bn", scale_init=0.0 if zero_bn else 1.0)
    return activation(m, x, act, f"{name}_{act}") if act else x


def squeeze_excite(m, x, act, name):
    """fastai's SEModule: x times sigmoid(conv(act(conv(mean of x)))) per channel."""
    channels = m.shape(x)[1]
    hidden = math.ceil(channels // REDUCTION / 8) * 8
    s = m.global_avg_pool(x, name=f"{name}_pool")
    s = conv_layer(m, s, hidden, 1, f"{name}_reduce", act, bn=False)
    s = conv_layer(m, s, channels, 1, f"{name}_expand", "sigmoid", bn=False)
    return m.op("Mul", [x, s], name=f"{name}_scale")


def self_attention(m, x, name):
    """fastai's SimpleSelfAttention (ks=1, sym=False): x + gamma (x x^T) (W x) over x's
    positions, W spectral-normalised."""
    channels = m.shape(x)[1]
    w = m.param(f"{name}_sn_w", (channels, channels, 1, 1), KAIMING[0], **KAIMING[1])
    u = m.param(f"{name}_sn_u", (channels,), "GaussianFill", trainable=False, std=1.0)
    v = m.param(f"{name}_sn_v", (channels,), "GaussianFill", trainable=False, std=1.0)
    w = m.op("SpectralNorm", [w, u, v], [f"{name}_sn", u, v], name=f"{name}_sn")[0]
    flat = m.reshape(x, [0, 0, -1], name=f"{name}_x")
    conv = m.reshape(m.op("Conv", [x, w], name=f"{name}_conv", kernel=1), [0, 0, -1],
                     name=f"{name}_wx")
    gram = m.op("BatchMatMul", [flat, flat], name=f"{name}_gram", trans_b=1)
    o = m.op("BatchMatMul", [gram, conv], name=f"{name}_o")
    gamma = m.param(f"{name}_gain_g", (1,), "ConstantFill", value=0.0)
    o = m.op("Mul", [o, gamma], name=f"{name}_gain")
    return m.op("ReshapeLike", [m.add(o, flat, name=f"{name}_sum"), x], name=name)


def block(m, x, expansion, width, stride, name, act, se, sa):
    """fastai's ResBlock (SEResNeXtBlock where ``se``) from x to width * expansion channels."""
    ni, nf = m.shape(x)[1], width * expansion
    hidden = math.floor(width * BASE_WIDTH / 64) * GROUPS if se else width
    group = GROUPS if se else 1
    if expansion == 1:
        y = conv_layer(m, x, hidden, 3, f"{name}a", act, stride, group)
    else:
        y = conv_layer(m, x, hidden, 1, f"{name}a", act)
        y = conv_layer(m, y, hidden, 3, f"{name}b", act, stride, group)
    y = conv_layer(m, y, nf, 1 if expansion > 1 else 3, f"{name}{'c' if expansion > 1 else 'b'}",
                   None, zero_bn=True)
    if se:
        y = squeeze_excite(m, y, act, f"{name}_se")
    if sa:
        y = self_attention(m, y, f"{name}_sa")
    shortcut = x
    if stride != 1:
        shortcut = m.avg_pool(shortcut, kernel=2, stride=stride, name=f"{name}_down")
    if ni != nf:
        shortcut = conv_layer(m, shortcut, nf, 1, f"{name}_proj", None)
    return activation(m, m.add(y, shortcut, name=f"{name}_sum"), act, f"{name}_{act}")


def parse(name):
    """(base, activation, self-attention) of ``name``: a key of DEPTHS, then "_mish" and/or
    "_sa"."""
    base, act, sa = name, "relu", False
    if base.endswith("_sa"):
        base, sa = base[:-len("_sa")], True
    if base.endswith("_mish"):
        base, act = base[:-len("_mish")], "mish"
    if base not in DEPTHS:
        raise ValueError(f"unknown xresnet '{name}': one of {', '.join(DEPTHS)}, then _mish "
                         f"and/or _sa")
    return base, act, sa


def xresnet(name, num_classes=1000, input_size=224):
    """The net ``name`` (``parse``; the module's doc)."""
    base, act, sa = parse(name)
    if not 32 <= input_size <= 1024 or input_size % 32:
        raise ValueError(f"input_size (--input-size) of {name} must be a multiple of 32 in "
                         f"[32, 1024], so that its average-pool shortcuts see even sides, got "
                         f"{input_size}")
    expansion, counts, se = DEPTHS[base]
    m = ModelBuilder(name)
    x = m.input("data", shape=(3, input_size, input_size))
    for i, width in enumerate((32, 32, 64)):
        x = conv_layer(m, x, width, 3, f"stem{i + 1}", act, stride=2 if i == 0 else 1)
    x = m.max_pool(x, kernel=3, stride=2, pad=1, name="stem_pool")
    for stage, (blocks, width) in enumerate(zip(counts, (64, 128, 256, 512)), start=1):
        for i in range(1, blocks + 1):
            stride = 2 if stage > 1 and i == 1 else 1
            x = block(m, x, expansion, width, stride, f"stage{stage}_{i}", act, se,
                      sa and stage == 1 and i == blocks)
    x = m.global_avg_pool(x, name="pool")
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="fc", weight_fill=KAIMING), "label")
    m.accuracy(prob, "label")
    m.accuracy(prob, "label", top_k=5)
    return m
