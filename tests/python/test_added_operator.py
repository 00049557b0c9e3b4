"""An operator added in one file (tests/example_op/square_op.cc, built apart as a plugin) is
listed with its doc, gives the builder its shapes, runs forward and differentiates, with
nothing else changed: loaded into a fresh process, a net data -> fc1 -> Square -> fc2 ->
softmax loss gets Square's shapes from the plugin's schema, its forward squares fc1, and the
gradient of the loss for fc1's weights (which flows back through SquareGradient) agrees with
central differences of the loss. Without the plugin the same net is refused by name."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLUGIN = os.path.join(ROOT, "build", "libcrossbow_example_op.so")

# In its own process: the plugin's registration would otherwise change the list of operators
# that other tests of this process see.
SCRIPT = r"""
import ctypes, json
import numpy as np
from crossbow import _native
_C = _native.load()
ctypes.CDLL({plugin!r}, mode=ctypes.RTLD_GLOBAL)
import crossbow
from crossbow import Model, ModelBuilder

rng = np.random.default_rng(5)
images = rng.normal(size=(6, 2, 3, 3)).astype(np.float32)
labels = rng.integers(0, 3, 6).astype(np.int32)

m = ModelBuilder("square")
x = m.input("data", shape=(2, 3, 3))
sq = m.op("Square", m.fc(x, 4, name="fc1"), name="sq")
m.softmax_loss(m.fc(sq, 3, name="fc2"))
image_shape = ModelBuilder("image")
image_shape.input("data", shape=(2, 3, 3))

model = Model(m, lr=0.1, momentum=0.0, weight_decay=0.0, seed=3)
got = model.forward(images, outputs=["fc1", "sq"])

model.learner.forward_backward(images, labels)
analytic = model.fetch(model.gradient_name("fc1_w"))
w = model.get_param("fc1_w")
step = 1e-2

def loss_at(v):
    model.set_param("fc1_w", v)
    return float(model.forward(images, outputs=["loss"], labels=labels)["loss"])

numeric = np.zeros_like(w)
for i in np.ndindex(*w.shape):
    up, down = w.copy(), w.copy()
    up[i] += step
    down[i] -= step
    numeric[i] = (loss_at(up) - loss_at(down)) / (2 * step)

print(json.dumps({{
    "listed": dict(crossbow.operators()).get("Square", ""),
    "doc": crossbow.operator_doc("SquareGradient"),
    "shape": list(m.shape(sq)),
    "image_shape": list(image_shape.shape(image_shape.op("Square", "data"))),
    "fc1": got["fc1"].tolist(), "sq": got["sq"].tolist(),
    "analytic": analytic.tolist(), "numeric": numeric.tolist(),
    "spec": json.dumps(model.spec)}}))
"""


@pytest.fixture(scope="module")
def with_plugin():
    if not os.path.exists(PLUGIN):
        pytest.skip(f"{PLUGIN} is not built (scripts/setup.sh builds it with the tests)")
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(plugin=PLUGIN)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_operator_listing_shows_it_with_its_doc(with_plugin):
    assert "Y = X * X, element-wise" in with_plugin["listed"]
    assert "dX = 2 X dY" in with_plugin["doc"]


def test_the_builder_takes_its_shapes_from_the_plugins_schema(with_plugin):
    assert with_plugin["shape"] == [None, 4]
    assert with_plugin["image_shape"] == [None, 2, 3, 3]


def test_its_forward_squares_its_input(with_plugin):
    fc1 = np.array(with_plugin["fc1"], np.float32)
    assert (fc1 < 0).any()  # negative inputs: Y = X * X, not max(X, 0) or X
    np.testing.assert_array_equal(np.array(with_plugin["sq"], np.float32), fc1 * fc1)


def test_its_gradient_agrees_with_central_differences(with_plugin):
    analytic = np.array(with_plugin["analytic"])
    numeric = np.array(with_plugin["numeric"])
    # Central differences of a float32 loss (~1) with step 1e-2: rounding adds ~1e-5 and the
    # step's truncation under 1% of each gradient (here at most 3e-5 apart, gradients ~0.24 on
    # average); a gradient off by a factor or a term is off by a good part of itself.
    atol, rtol = 1e-4, 2e-2
    assert np.mean(np.abs(numeric)) > 20 * atol  # a check that could pass whatever the gradient
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol)


def test_without_the_plugin_the_builder_refuses_it_by_name():
    from crossbow import ModelBuilder, _native
    if not _native.available():
        pytest.skip("crossbow._C is not built (scripts/setup.sh)")
    assert "Square" not in dict(_native.load().operators())
    m = ModelBuilder("square")
    x = m.input("data", shape=(2, 3, 3))
    with pytest.raises(ValueError, match=r"unknown operator 'Square'"):
        m.op("Square", x)


def test_without_the_plugin_the_same_net_is_refused_by_name(with_plugin):
    from crossbow import _native
    with pytest.raises(ValueError, match=r"unknown operator 'Square'"):
        _native.load().Learner(with_plugin["spec"])
