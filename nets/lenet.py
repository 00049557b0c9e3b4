"""LeNet for MNIST (1x28x28), as in Caffe's examples/mnist: 431,080 parameters.

As Caffe's lenet_train_test.prototxt, every weight is XavierFill; biases start at 0."""
from crossbow.builder import ModelBuilder


def lenet(num_classes=10):
    m = ModelBuilder("lenet")
    x = m.input("data", shape=(1, 28, 28))
    xavier = ("XavierFill", {})
    x = m.max_pool(m.conv(x, 20, kernel=5, name="conv1", weight_fill=xavier), 2, name="pool1")
    x = m.max_pool(m.conv(x, 50, kernel=5, name="conv2", weight_fill=xavier), 2, name="pool2")
    x = m.relu(m.fc(x, 500, name="ip1"), name="relu1")
    prob, _ = m.softmax_loss(m.fc(x, num_classes, name="ip2"), "label")
    m.accuracy(prob, "label")
    return m
