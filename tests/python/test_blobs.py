"""Model.forward(images, outputs=[...]) and Model.fetch(name): any blob of a real learner as a
numpy array, checked against numpy computations from the learner's own weights."""
import os

import numpy as np
import pytest

from crossbow import Model, ModelBuilder

pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

N, CLASSES = 6, 3
RNG = np.random.default_rng(7)
IMAGES = RNG.normal(size=(N, 2, 3, 3)).astype(np.float32)
LABELS = RNG.integers(0, CLASSES, N).astype(np.int32)
BN_MEAN = np.array([0.5, -0.25], np.float32)
BN_VAR = np.array([0.04, 2.0], np.float32)
EPSILON = 1e-3


def model():
    """data -> batch norm -> relu -> fc1 -> relu -> fc2 -> softmax loss. The batch norm and its
    ReLU fuse in training (operators/spatial_bn_op.cc), so `bn` exists only if forward keeps it."""
    m = ModelBuilder("blobs")
    x = m.input("data", shape=(2, 3, 3))
    h = m.relu(m.spatial_bn(x, name="bn", epsilon=EPSILON), name="bn_relu")
    h = m.relu(m.fc(h, 5, name="fc1"), name="fc1_relu")
    m.softmax_loss(m.fc(h, CLASSES, name="fc2"))
    model = Model(m, lr=0.1, momentum=0.0, seed=3)
    model.set_param("bn_rm", BN_MEAN)
    model.set_param("bn_rv", BN_VAR)
    model.set_param("bn_s", np.array([1.5, 0.5], np.float32))
    model.set_param("bn_b", np.array([0.1, -0.2], np.float32))
    return model


def numpy_forward(model, images, train=False):
    """In float64 from the learner's weights, every intermediate by name: inference mode, or
    training mode (batch norm with the batch's statistics)."""
    p = {n: model.get_param(n).astype(np.float64) for n in model.builder.params
         + model.builder.state}
    c = lambda v: v[None, :, None, None]  # noqa: E731
    mean, var = (images.mean(axis=(0, 2, 3)), images.var(axis=(0, 2, 3))) if train else (
        p["bn_rm"], p["bn_rv"])
    bn = c(p["bn_s"]) * (images - c(mean)) / np.sqrt(c(var) + EPSILON) + c(p["bn_b"])
    fc1 = np.maximum(bn, 0).reshape(len(images), -1) @ p["fc1_w"].T + p["fc1_b"]
    fc1_relu = np.maximum(fc1, 0)
    fc2 = fc1_relu @ p["fc2_w"].T + p["fc2_b"]
    prob = np.exp(fc2 - fc2.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    return {"bn": bn, "fc1": fc1, "fc1_relu": fc1_relu, "fc2": fc2, "prob": prob}


def test_forward_returns_intermediate_blobs_as_numpy_computes_them():
    m = model()
    want = numpy_forward(m, IMAGES.astype(np.float64))
    got = m.forward(IMAGES, outputs=["fc1", "bn", "prob"])
    assert list(got) == ["fc1", "bn", "prob"]
    # Pre-activations: negative values show they are read before their ReLU, unfused.
    assert (got["bn"] < 0).any() and (got["fc1"] < 0).any()
    for name in got:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_array_equal(m.fetch(name), got[name])
    assert got["bn"].shape == (N, 2, 3, 3) and got["fc1"].shape == (N, 5)


def test_forward_with_labels_runs_the_loss_layer():
    m = model()
    prob = numpy_forward(m, IMAGES.astype(np.float64))["prob"]
    loss = -np.mean(np.log(prob[np.arange(N), LABELS]))
    got = m.forward(IMAGES, outputs=["loss"], labels=LABELS)["loss"]
    assert got == pytest.approx(loss, rel=1e-5)


def test_gradients_after_a_step_are_fetched_by_their_blob_names():
    m = model()
    before = numpy_forward(m, IMAGES.astype(np.float64), train=True)
    w2 = m.get_param("fc2_w").astype(np.float64)
    m.step(IMAGES, LABELS)
    d_fc2 = before["prob"].copy()
    d_fc2[np.arange(N), LABELS] -= 1
    d_fc2 /= N
    want = {"fc2_w": d_fc2.T @ before["fc1_relu"], "fc2_b": d_fc2.sum(axis=0),
            "fc1_b": ((d_fc2 @ w2) * (before["fc1"] > 0)).sum(axis=0)}
    for param, grad in want.items():
        np.testing.assert_allclose(m.fetch(m.gradient_name(param)), grad, rtol=1e-4, atol=1e-6,
                                   err_msg=param)
    # The step applied that gradient (momentum 0, no weight decay): w' = w - lr grad.
    np.testing.assert_allclose(m.get_param("fc2_w"), w2 - 0.1 * want["fc2_w"], rtol=1e-5,
                               atol=1e-6)


def test_unknown_blobs_are_errors_that_name_them_and_list_the_others():
    m = model()
    with pytest.raises(ValueError, match=r"the forward net without labels has no blob 'fc3'; "
                                         r"did you mean 'fc1'\? \(its blobs: .*fc1_relu.*fc2"):
        m.forward(IMAGES, outputs=["fc3"])
    with pytest.raises(ValueError, match=r"no blob 'loss'"):  # the loss layer needs labels
        m.forward(IMAGES, outputs=["loss"])
    m.forward(IMAGES, outputs=["fc1"])
    with pytest.raises(ValueError, match=r"no blob 'fc11' to fetch; did you mean 'fc1'\? "
                                         r"\(blobs now: .*fc1_w"):
        m.fetch("fc11")
    # An activation of the training step shares its buffer with others: not fetchable.
    m.step(IMAGES, LABELS)
    with pytest.raises(ValueError, match=r"no blob 'fc1_relu' to fetch.*fc2_w_grad"):
        m.fetch("fc1_relu")
    with pytest.raises(KeyError, match=r"'fc22_w' is not a parameter of model 'blobs'; did you "
                                       r"mean 'fc2_w'"):
        m.gradient_name("fc22_w")
    with pytest.raises(TypeError, match="a list of blob names"):
        m.forward(IMAGES, outputs="fc1")


def test_the_guides_example_runs():
    guide = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "guide.md")
    blocks = open(guide).read().split("```")[1::2]
    (block,) = [b for b in blocks if "model.forward(" in b]
    namespace = {}
    exec(block[len("python\n"):], namespace)  # its assert compares an FC layer with numpy
    assert namespace["grad"].shape == (500, 800) and np.abs(namespace["grad"]).max() > 0
