"""CIFAR ResNets of He et al. 2016 (section 4.2): 6n+2 layers on 3x32x32.

conv3x3 16 + BN + ReLU, three stages of n basic blocks at 16/32/64 channels (stride 2
at stages 2 and 3), global average pool, FC. Shortcuts are option A (parameter free):
MaxPool(kernel 1, stride 2) subsamples and ChannelPad appends zero channels.
ResNet-20/32/56/110: 269,722 / 464,154 / 853,018 / 1,727,962 parameters (10 classes).
``zero_init_residual`` starts the last batch norm of every block at scale 0 (Goyal et al. 2017,
appendix; torchvision's argument of the same name), so that each block starts as the
identity; He et al. start it at 1, the default.
"""
from crossbow.builder import ModelBuilder


def conv_bn(m, x, channels, kernel, stride, name, relu=True, scale_init=1.0):
    x = m.conv(x, channels, kernel=kernel, stride=stride, pad=kernel // 2, bias=False,
               name=f"{name}_conv")
    x = m.spatial_bn(x, name=f"{name}_bn", scale_init=scale_init)
    return m.relu(x, name=f"{name}_relu") if relu else x


def residual_scale_init(zero_init_residual):
    """The initial scale of the batch norm that ends a residual branch."""
    return 0.0 if zero_init_residual else 1.0


def basic_block(m, x, channels, stride, name, last_scale):
    in_channels = m.shape(x)[1]
    y = conv_bn(m, x, channels, 3, stride, f"{name}a")
    y = conv_bn(m, y, channels, 3, 1, f"{name}b", relu=False, scale_init=last_scale)
    shortcut = x
    if stride != 1:
        shortcut = m.max_pool(shortcut, kernel=1, stride=stride, name=f"{name}_down")
    if channels != in_channels:
        shortcut = m.channel_pad(shortcut, after=channels - in_channels, name=f"{name}_pad")
    return m.relu(m.add(y, shortcut, name=f"{name}_sum"), name=f"{name}_relu")


def resnet(depth, num_classes=10, zero_init_residual=False):
    if depth < 8 or (depth - 2) % 6:
        raise ValueError(f"CIFAR ResNet depth must be 6n+2 (20, 32, 56, 110), got {depth}")
    n = (depth - 2) // 6
    m = ModelBuilder(f"resnet{depth}")
    last_scale = residual_scale_init(zero_init_residual)
    x = conv_bn(m, m.input("data", shape=(3, 32, 32)), 16, 3, 1, "conv1")
    for stage, channels in enumerate((16, 32, 64), start=1):
        for block in range(1, n + 1):
            stride = 2 if stage > 1 and block == 1 else 1
            x = basic_block(m, x, channels, stride, f"res{stage}_{block}", last_scale)
    x = m.global_avg_pool(x, name="pool")
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="fc"), "label")
    m.accuracy(prob, "label")
    return m
