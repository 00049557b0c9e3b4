"""VGG-16 (batch norm, CIFAR) and LeNet (MNIST) in PyTorch: twins of nets/vgg.py and
nets/lenet.py, layer for layer, for crossbow.interop (torch_names.py maps their names).

VGG16: ``features`` numbered as torchvision's vgg16_bn (Conv2d with bias, BatchNorm2d, ReLU;
MaxPool2d), so its convolutions load torchvision's feature weights too; then one Linear,
``classifier``, from the 512 channels of the last 1x1 map. The CIFAR ResNets' twin is
python/crossbow/torch_resnet.py; ResNet-50's is torchvision.models.resnet50.

resnet18d, resnet50d: torchvision's ResNet made into timm's ResNet-D (Bag of Tricks): the stem
conv1 = Sequential(conv 3x3/2 to 32, bn, relu, conv 32, bn, relu, conv 64) before bn1, and each
projection shortcut downsample = Sequential(AvgPool2d 2x2 at the block's stride (Identity at
stride 1), conv 1x1 stride 1, bn), with timm's state_dict names. Needs torch and torchvision.
resnet18d_maxblur, resnet50d_maxblur: those with the stem's max pool made MaxBlurPool as
antialiased-cnns does (MaxPool2d(2, 1), then ReflectionPad2d(1) and the fixed [1, 2, 1]^2 / 16
filter depthwise at stride 2): no parameters, so the same state_dict."""
import torch
import torch.nn as nn

VGG16 = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
         512, 512, 512, "M")


class VGG(nn.Module):
    def __init__(self, classes=10, config=VGG16):
        super().__init__()
        layers, cin = [], 3
        for v in config:
            if v == "M":
                layers.append(nn.MaxPool2d(2))
                continue
            layers += [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            cin = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(cin, classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class LeNet(nn.Module):
    """Caffe's MNIST LeNet: conv 20@5x5, pool, conv 50@5x5, pool, ip 500, ReLU, ip."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5)
        self.conv2 = nn.Conv2d(20, 50, 5)
        self.ip1 = nn.Linear(50 * 4 * 4, 500)
        self.ip2 = nn.Linear(500, classes)

    def forward(self, x):
        x = nn.functional.max_pool2d(self.conv1(x), 2)
        x = nn.functional.max_pool2d(self.conv2(x), 2)
        return self.ip2(nn.functional.relu(self.ip1(x.flatten(1))))


def vgg16(classes=10):
    return VGG(classes)


def lenet(classes=10):
    return LeNet(classes)


def _deep_stem():
    def conv(cin, cout, stride):
        return nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
    return nn.Sequential(conv(3, 32, 2), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                         conv(32, 32, 1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
                         conv(32, 64, 1))


def _resnet_d(make, classes):
    net = make(num_classes=classes)
    net.conv1 = _deep_stem()
    for stage in (net.layer1, net.layer2, net.layer3, net.layer4):
        for block in stage:
            if block.downsample is None:
                continue
            conv, bn = block.downsample
            stride = conv.stride[0]
            pool = (nn.AvgPool2d(2, stride, ceil_mode=True, count_include_pad=False)
                    if stride > 1 else nn.Identity())
            block.downsample = nn.Sequential(
                pool, nn.Conv2d(conv.in_channels, conv.out_channels, 1, bias=False), bn)
    return net


def resnet18d(classes=1000):
    import torchvision
    return _resnet_d(torchvision.models.resnet18, classes)


def resnet50d(classes=1000):
    import torchvision
    return _resnet_d(torchvision.models.resnet50, classes)


class BlurPool(nn.Module):
    """antialiased-cnns' BlurPool with filter size 3 and reflect padding, stride 2."""

    def __init__(self, channels):
        super().__init__()
        taps = torch.tensor([1.0, 2.0, 1.0])
        self.register_buffer("filt", (taps[:, None] * taps[None, :] / 16).repeat(
            channels, 1, 1, 1), persistent=False)

    def forward(self, x):
        x = nn.functional.pad(x, (1, 1, 1, 1), mode="reflect")
        return nn.functional.conv2d(x, self.filt, stride=2, groups=x.shape[1])


def _max_blur(net):
    net.maxpool = nn.Sequential(nn.MaxPool2d(2, 1), BlurPool(64))
    return net


def resnet18d_maxblur(classes=1000):
    return _max_blur(resnet18d(classes))


def resnet50d_maxblur(classes=1000):
    return _max_blur(resnet50d(classes))
