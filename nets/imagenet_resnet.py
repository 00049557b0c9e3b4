"""ImageNet ResNets of He et al. 2016 (Table 1) for 3 x S x S input (S = input_size, 224 by
default; any size from 32 works, as the net ends in a global average pool). ResNet-18/34 stack
basic blocks, ResNet-50/101/152 bottlenecks, v1.5 (the stride sits on the 3x3 conv, as
torchvision); projection shortcuts (1x1 conv + BN) where the shape changes.
With 1000 classes: ResNet-18 11,689,512, ResNet-34 21,797,672, ResNet-50 25,557,032 parameters,
as torchvision counts them. ``zero_init_residual`` as in nets/cifar_resnet.py."""
from crossbow.builder import ModelBuilder
from crossbow.nets.cifar_resnet import conv_bn, residual_scale_init

BLOCKS = {18: ("basic", (2, 2, 2, 2)), 34: ("basic", (3, 4, 6, 3)),
          50: ("bottleneck", (3, 4, 6, 3)), 101: ("bottleneck", (3, 4, 23, 3)),
          152: ("bottleneck", (3, 8, 36, 3))}


def _shortcut(m, x, out, stride, name):
    if stride != 1 or m.shape(x)[1] != out:
        return conv_bn(m, x, out, 1, stride, f"{name}_proj", relu=False)
    return x


def basic(m, x, width, stride, name, last_scale):
    y = conv_bn(m, x, width, 3, stride, f"{name}a")
    y = conv_bn(m, y, width, 3, 1, f"{name}b", relu=False, scale_init=last_scale)
    shortcut = _shortcut(m, x, width, stride, name)
    return m.relu(m.add(y, shortcut, name=f"{name}_sum"), name=f"{name}_relu")


def bottleneck(m, x, width, stride, name, last_scale):
    out = 4 * width
    y = conv_bn(m, x, width, 1, 1, f"{name}a")
    y = conv_bn(m, y, width, 3, stride, f"{name}b")
    y = conv_bn(m, y, out, 1, 1, f"{name}c", relu=False, scale_init=last_scale)
    shortcut = _shortcut(m, x, out, stride, name)
    return m.relu(m.add(y, shortcut, name=f"{name}_sum"), name=f"{name}_relu")


def resnet(depth=50, num_classes=1000, input_size=224, zero_init_residual=False):
    if depth not in BLOCKS:
        raise ValueError(f"ImageNet ResNet depth must be one of {sorted(BLOCKS)}, got {depth}")
    if not 32 <= input_size <= 1024:
        raise ValueError(f"input_size (--input-size) of resnet{depth} must be in [32, 1024] "
                         f"pixels (five stride-2 steps), got {input_size}")
    kind, counts = BLOCKS[depth]
    block_of = basic if kind == "basic" else bottleneck
    last_scale = residual_scale_init(zero_init_residual)
    m = ModelBuilder(f"resnet{depth}")
    x = conv_bn(m, m.input("data", shape=(3, input_size, input_size)), 64, 7, 2, "conv1")
    x = m.max_pool(x, kernel=3, stride=2, pad=1, name="pool1")
    for stage, (blocks, width) in enumerate(zip(counts, (64, 128, 256, 512)), start=2):
        for block in range(1, blocks + 1):
            stride = 2 if stage > 2 and block == 1 else 1
            x = block_of(m, x, width, stride, f"res{stage}_{block}", last_scale)
    x = m.global_avg_pool(x, name="pool")
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="fc"), "label")
    m.accuracy(prob, "label")
    m.accuracy(prob, "label", top_k=5)
    return m
