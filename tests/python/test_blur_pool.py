"""BlurPool and MaxBlurPool (Zhang 2019) against numpy, and `crossbow ops` explaining it."""
import numpy as np
import pytest

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

import crossbow  # noqa: E402
from crossbow import cli  # noqa: E402
from crossbow.builder import ModelBuilder  # noqa: E402


def numpy_blur_pool(x, stride=2):
    """antialiased-cnns' way: ReflectionPad2d(1) (numpy's "reflect"), then the 3x3 binomial
    filter [1, 2, 1]^T [1, 2, 1] / 16 on every channel at `stride`."""
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    taps = np.array([1.0, 2.0, 1.0])
    filt = np.outer(taps, taps) / 16
    h, w = padded.shape[2] - 2, padded.shape[3] - 2
    out = sum(filt[a, b] * padded[:, :, a:a + h, b:b + w] for a in range(3) for b in range(3))
    return out[:, :, ::stride, ::stride]


def numpy_max_pool_2x2_stride_1(x):
    return np.maximum.reduce([x[:, :, a:x.shape[2] - 1 + a, b:x.shape[3] - 1 + b]
                              for a in (0, 1) for b in (0, 1)])


def model(shape, stride):
    m = ModelBuilder("blur")
    x = m.input("data", shape=shape)
    blurred = m.op("BlurPool", x, name="blur", stride=stride)
    maxed = m.max_pool(x, kernel=2, stride=1, name="max")
    m.op("BlurPool", maxed, name="maxblur")
    m.softmax_loss(m.fc(m.add(m.fc(blurred, 10, name="a"), m.fc("maxblur", 10, name="b")), 10),
                   "label")
    return crossbow.Model(m)


@pytest.mark.parametrize("shape, stride", [((3, 8, 8), 2), ((2, 7, 9), 2), ((1, 5, 6), 1)])
def test_blur_pool_and_max_blur_pool_match_numpy(shape, stride):
    x = np.random.default_rng(0).standard_normal((2,) + shape).astype(np.float32)
    out = model(shape, stride).forward(x, outputs=["blur", "maxblur"])
    expected = numpy_blur_pool(x, stride)
    assert out["blur"].shape == expected.shape
    np.testing.assert_allclose(out["blur"], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["maxblur"], numpy_blur_pool(numpy_max_pool_2x2_stride_1(x)),
                               rtol=1e-5, atol=1e-6)


def test_crossbow_ops_lists_and_explains_blur_pool(capsys):
    assert cli.main(["ops"]) == 0
    assert "BlurPool" in capsys.readouterr().out
    assert cli.main(["ops", "BlurPool"]) == 0
    doc = capsys.readouterr().out
    assert "Zhang 2019" in doc and "[1, 2, 1] x [1, 2, 1] / 16" in doc and "reflection" in doc


def test_the_maxblur_zoo_net_trains_a_step():
    m = crossbow.nets.build("resnet18d_maxblur", num_classes=4, input_size=64)
    x = np.random.default_rng(1).standard_normal((2, 3, 64, 64)).astype(np.float32)
    assert np.isfinite(m.step(x, np.array([0, 3], np.int32)))
    assert m.forward(x, outputs=["pool1"])["pool1"].shape == (2, 64, 16, 16)
