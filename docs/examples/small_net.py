"""A net defined in Python for `crossbow train --net docs/examples/small_net.py:small_net`
(docs/guide.md, "Your own net"): a small CNN for 1x28x28 digits."""
from crossbow import ModelBuilder


def small_net(num_classes=10):
    m = ModelBuilder("small_net")
    x = m.input("data", shape=(1, 28, 28))
    x = m.max_pool(m.relu(m.spatial_bn(m.conv(x, 8, kernel=3, pad=1, name="conv1"))), 2)
    x = m.relu(m.fc(x, 32, name="fc1"))
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="fc2"))
    m.accuracy(prob)
    m.preset = "mnist"  # the input pipeline of LMDB data (--augment auto): MNIST's
    return m
