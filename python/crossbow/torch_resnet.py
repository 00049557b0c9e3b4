"""The CIFAR ResNets of nets/cifar_resnet.py in PyTorch, for the benchmarks' peer runs
(bench_step.py, bench_train.py, bench_torch_gpu.py): the same layers, option-A shortcuts
(subsample, zero channels appended), no bias in convolutions. Needs torch only."""
import torch.nn as nn
import torch.nn.functional as F

# Parameters with 10 classes, as nets/cifar_resnet.py counts them.
PARAMS = {20: 269_722, 32: 464_154, 56: 853_018, 110: 1_727_962}


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.pad = cout - cin
        self.stride = stride

    def forward(self, x):
        out = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
        short = x[:, :, ::self.stride, ::self.stride] if self.stride > 1 else x
        if self.pad:
            short = F.pad(short, (0, 0, 0, 0, 0, self.pad))
        return F.relu(out + short)


class CifarResNet(nn.Module):
    def __init__(self, depth=32, classes=10):
        super().__init__()
        if depth < 8 or (depth - 2) % 6:
            raise ValueError(f"CIFAR ResNet depth must be 6n+2 (20, 32, 56, 110), got {depth}")
        n = (depth - 2) // 6
        self.conv = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        layers, cin = [], 16
        for cout, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(n):
                layers.append(Block(cin, cout, stride if i == 0 else 1))
                cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.layers(F.relu(self.bn(self.conv(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def cifar_resnet(depth=32, classes=10):
    """A CIFAR ResNet; with 10 classes its parameter count is checked against Crossbow's."""
    model = CifarResNet(depth, classes)
    count = sum(p.numel() for p in model.parameters())
    if classes == 10 and depth in PARAMS and count != PARAMS[depth]:
        raise AssertionError(f"ResNet-{depth}: {count} parameters, Crossbow's has {PARAMS[depth]}")
    return model
