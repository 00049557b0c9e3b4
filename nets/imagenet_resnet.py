"""ImageNet bottleneck ResNets, v1.5 (the stride sits on the 3x3 conv, as torchvision),
for 3x224x224 input. Projection shortcuts (1x1 conv + BN) where the shape changes.
ResNet-50: 25,557,032 parameters with 1000 classes."""
from crossbow.builder import ModelBuilder
from crossbow.nets.cifar_resnet import conv_bn

BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


def bottleneck(m, x, width, stride, name):
    out = 4 * width
    y = conv_bn(m, x, width, 1, 1, f"{name}a")
    y = conv_bn(m, y, width, 3, stride, f"{name}b")
    y = conv_bn(m, y, out, 1, 1, f"{name}c", relu=False)
    shortcut = x
    if stride != 1 or m.shape(x)[1] != out:
        shortcut = conv_bn(m, x, out, 1, stride, f"{name}_proj", relu=False)
    return m.relu(m.add(y, shortcut, name=f"{name}_sum"), name=f"{name}_relu")


def resnet(depth=50, num_classes=1000):
    if depth not in BLOCKS:
        raise ValueError(f"ImageNet ResNet depth must be one of {sorted(BLOCKS)}, got {depth}")
    m = ModelBuilder(f"resnet{depth}")
    x = conv_bn(m, m.input("data", shape=(3, 224, 224)), 64, 7, 2, "conv1")
    x = m.max_pool(x, kernel=3, stride=2, pad=1, name="pool1")
    for stage, (blocks, width) in enumerate(zip(BLOCKS[depth], (64, 128, 256, 512)), start=2):
        for block in range(1, blocks + 1):
            stride = 2 if stage > 2 and block == 1 else 1
            x = bottleneck(m, x, width, stride, f"res{stage}_{block}")
    x = m.global_avg_pool(x, name="pool")
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="fc"), "label")
    m.accuracy(prob, "label")
    m.accuracy(prob, "label", top_k=5)
    return m
