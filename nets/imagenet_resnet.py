"""ImageNet ResNets of He et al. 2016 (Table 1) for 3 x S x S input (S = input_size, 224 by
default; any size from 32 works, as the net ends in a global average pool). ResNet-18/34 stack
basic blocks, ResNet-50/101/152 bottlenecks, v1.5 (the stride sits on the 3x3 conv, as
torchvision); projection shortcuts (1x1 conv + BN) where the shape changes.
With 1000 classes: ResNet-18 11,689,512, ResNet-34 21,797,672, ResNet-50 25,557,032 parameters,
as torchvision counts them. ``zero_init_residual`` as in nets/cifar_resnet.py.

ResNet-D (He et al. 2019, "Bag of Tricks", section 4; timm's resnet18d/resnet50d): the 7x7 stem
becomes three 3x3 convolutions of 32, 32 and 64 channels (the first of stride 2), and a
projection shortcut of stride 2 average-pools (2x2, stride 2) before its 1x1 convolution of
stride 1, so that it reads every input pixel. The stem adds 19,232 parameters (28,768 for three
convolutions and their batch norms instead of 9,536), the pooling none: 11,708,744 (resnet18d)
and 25,576,264 (resnet50d), timm's counts. timm pools with ceil_mode and without counting
padding, which equals the plain pool where every pooled side is even: input_size must be a
multiple of 32.

MaxBlurPool (Zhang 2019, "Making Convolutional Networks Shift-Invariant Again"; the xresnet of
the Imagenette leaderboard's 20-epoch record): ``max_blur_pool`` turns the stem's max pool of
stride 2 into a max pool of kernel 2 and stride 1 and then BlurPool (a fixed binomial blur of
stride 2), as antialiased-cnns' ResNets do; the output side is the same and no parameter is
added (resnet18d_maxblur, resnet50d_maxblur)."""
from crossbow.builder import ModelBuilder
from crossbow.nets.cifar_resnet import conv_bn, residual_scale_init

BLOCKS = {18: ("basic", (2, 2, 2, 2)), 34: ("basic", (3, 4, 6, 3)),
          50: ("bottleneck", (3, 4, 6, 3)), 101: ("bottleneck", (3, 4, 23, 3)),
          152: ("bottleneck", (3, 8, 36, 3))}


def _shortcut(m, x, out, stride, name, avg_down):
    if stride != 1 and avg_down:  # ResNet-D
        x = m.avg_pool(x, kernel=2, stride=stride, name=f"{name}_down")
        return conv_bn(m, x, out, 1, 1, f"{name}_proj", relu=False)
    if stride != 1 or m.shape(x)[1] != out:
        return conv_bn(m, x, out, 1, stride, f"{name}_proj", relu=False)
    return x


def basic(m, x, width, stride, name, last_scale, avg_down):
    y = conv_bn(m, x, width, 3, stride, f"{name}a")
    y = conv_bn(m, y, width, 3, 1, f"{name}b", relu=False, scale_init=last_scale)
    shortcut = _shortcut(m, x, width, stride, name, avg_down)
    return m.relu(m.add(y, shortcut, name=f"{name}_sum"), name=f"{name}_relu")


def bottleneck(m, x, width, stride, name, last_scale, avg_down):
    out = 4 * width
    y = conv_bn(m, x, width, 1, 1, f"{name}a")
    y = conv_bn(m, y, width, 3, stride, f"{name}b")
    y = conv_bn(m, y, out, 1, 1, f"{name}c", relu=False, scale_init=last_scale)
    shortcut = _shortcut(m, x, out, stride, name, avg_down)
    return m.relu(m.add(y, shortcut, name=f"{name}_sum"), name=f"{name}_relu")


def _stem(m, x, deep):
    if not deep:
        return conv_bn(m, x, 64, 7, 2, "conv1")
    x = conv_bn(m, x, 32, 3, 2, "conv1a")
    x = conv_bn(m, x, 32, 3, 1, "conv1b")
    return conv_bn(m, x, 64, 3, 1, "conv1c")


def _stem_pool(m, x, max_blur_pool):
    if not max_blur_pool:
        return m.max_pool(x, kernel=3, stride=2, pad=1, name="pool1")
    x = m.max_pool(x, kernel=2, stride=1, name="pool1_max")
    return m.op("BlurPool", x, name="pool1", stride=2)


def resnet(depth=50, num_classes=1000, input_size=224, zero_init_residual=False, variant="",
           max_blur_pool=False):
    """``variant`` "d": ResNet-D; ``max_blur_pool``: MaxBlurPool in the stem (the module's
    doc)."""
    if depth not in BLOCKS:
        raise ValueError(f"ImageNet ResNet depth must be one of {sorted(BLOCKS)}, got {depth}")
    if variant not in ("", "d"):
        raise ValueError(f"ImageNet ResNet variant must be '' or 'd', got '{variant}'")
    name = f"resnet{depth}{variant}" + ("_maxblur" if max_blur_pool else "")
    if not 32 <= input_size <= 1024:
        raise ValueError(f"input_size (--input-size) of {name} must be in [32, 1024] "
                         f"pixels (five stride-2 steps), got {input_size}")
    if variant == "d" and input_size % 32:
        raise ValueError(f"input_size (--input-size) of {name} must be a multiple of 32, so "
                         f"that its average-pool shortcuts see even sides, got {input_size}")
    kind, counts = BLOCKS[depth]
    block_of = basic if kind == "basic" else bottleneck
    last_scale = residual_scale_init(zero_init_residual)
    m = ModelBuilder(name)
    x = _stem(m, m.input("data", shape=(3, input_size, input_size)), deep=variant == "d")
    x = _stem_pool(m, x, max_blur_pool)
    for stage, (blocks, width) in enumerate(zip(counts, (64, 128, 256, 512)), start=2):
        for block in range(1, blocks + 1):
            stride = 2 if stage > 2 and block == 1 else 1
            x = block_of(m, x, width, stride, f"res{stage}_{block}", last_scale, variant == "d")
    x = m.global_avg_pool(x, name="pool")
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="fc"), "label")
    m.accuracy(prob, "label")
    m.accuracy(prob, "label", top_k=5)
    return m
