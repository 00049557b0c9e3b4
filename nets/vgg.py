"""VGG-16 with batch norm for CIFAR (3x32x32): 13 conv3x3 (with bias) + BN + ReLU,
five 2x2 max pools, one FC to the classes: 14,728,266 parameters with 10 classes."""
from crossbow.builder import ModelBuilder

VGG16 = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
         512, 512, 512, "M")


def vgg16(num_classes=10, config=VGG16, name="vgg16"):
    m = ModelBuilder(name)
    x = m.input("data", shape=(3, 32, 32))
    block, layer = 1, 1
    for v in config:
        if v == "M":
            x = m.max_pool(x, 2, name=f"pool{block}")
            block, layer = block + 1, 1
            continue
        tag = f"conv{block}_{layer}"
        x = m.conv(x, v, kernel=3, pad=1, name=tag)
        x = m.relu(m.spatial_bn(x, name=f"{tag}_bn"), name=f"{tag}_relu")
        layer += 1
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="fc"), "label")
    m.accuracy(prob, "label")
    return m
