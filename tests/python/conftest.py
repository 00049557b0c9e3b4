"""Shared fixtures: a source-tree import path (the package and the scripts' folders), and a fake ``crossbow._C`` for the tests
that exercise the Python side of calls into C++ without the extension."""
import functools
import json
import os
import sys
import types

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
# scripts/ is grouped by purpose (scripts/README.md); the tests import its modules by name.
SCRIPT_DIRS = sorted(d for d in (os.path.join(ROOT, "scripts", f)
                                 for f in os.listdir(os.path.join(ROOT, "scripts")))
                     if os.path.isdir(d))
sys.path[1:1] = SCRIPT_DIRS


def script(name):
    """The path of scripts/*/NAME (or scripts/NAME)."""
    for d in [os.path.join(ROOT, "scripts")] + SCRIPT_DIRS:
        if os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    raise FileNotFoundError(f"no script {name} under scripts/")

import crossbow  # noqa: E402
from crossbow import _native  # noqa: E402

OPERATORS = ["Accuracy", "Add", "AveragePool", "ChannelPad", "Concat", "ConstantFill", "Conv",
             "Dropout", "FC", "Flatten", "GaussianFill", "GlobalAveragePool", "MSRAFill",
             "MaxPool", "Relu", "Reshape", "Softmax", "SoftmaxWithLoss", "SpatialBN", "Sum",
             "UniformFill", "XavierFill", "Square"]


class FakeLearner:
    """Records what Model hands to C++; answers with plausible values."""
    created = []

    def __init__(self, spec_json):
        self.spec = json.loads(spec_json)
        self.calls = []
        self.blobs = {}
        self.lr = self.spec["solver"]["lr"]
        FakeLearner.created.append(self)

    def step(self, data, labels):
        self.calls.append(("step", data, labels))
        return 2.25

    def predict(self, data):
        self.calls.append(("predict", data))
        return np.full((data.shape[0], 10), 0.1, dtype=np.float32)

    def evaluate(self, data, labels):
        self.calls.append(("evaluate", data, labels))
        # loss 1, top-1 = fraction of label 0 in this batch, top-5 = 1
        return 1.0, float(np.mean(labels == 0)), 1.0

    def get(self, name):
        return self.blobs[name]

    def set(self, name, value):
        self.blobs[name] = value.copy()

    def param_names(self):
        return list(self.spec["params"])

    def save(self, path):
        with open(path, "w") as f:
            json.dump({k: v.tolist() for k, v in self.blobs.items()}, f)

    def load(self, path):
        with open(path) as f:
            self.blobs = {k: np.asarray(v, np.float32) for k, v in json.load(f).items()}

    def set_learning_rate(self, lr):
        self.lr = lr

    def memory_stats(self):
        return {"planned_bytes": 1, "unplanned_bytes": 2}


def _operator_doc(name):
    if name in OPERATORS:
        return f"{name}: the operator."
    import difflib
    near = difflib.get_close_matches(name, OPERATORS, n=1)
    raise ValueError(f"unknown operator '{name}'" + (f"; did you mean '{near[0]}'?" if near
                                                      else ""))


def _infer_shapes(real, net_json, shapes, int_inputs=()):
    """Square's shapes are the fake's own; every other operator's come from the real schemas
    (a builder asks them for every layer), so a test using them skips until _C is built."""
    net = json.loads(net_json)
    if all(op["type"] == "Square" for op in net["ops"]):
        out = dict(shapes)
        for op in net["ops"]:
            out[op["outputs"][0]] = list(out[op["inputs"][0]])
        return out
    return _real(real, "infer_shapes")(net_json, shapes, int_inputs)


def _real(real, name):
    """What the fake lacks comes from the real extension (the option table, the schemas)."""
    if real is None:
        pytest.skip(f"crossbow._C is not built: the fake takes {name} from it")
    return getattr(real, name)


@pytest.fixture
def fake_C(monkeypatch):
    """Installs a fake crossbow._C module (a recording Learner; the real shape inference and
    option table); returns it."""
    real = _native.load() if _native.available() else None
    mod = types.ModuleType("crossbow._C")
    mod.operators = lambda: [(n, f"{n}: the operator.") for n in OPERATORS]
    mod.operator_doc = _operator_doc
    mod.infer_shapes = functools.partial(_infer_shapes, real)
    mod.Learner = FakeLearner
    mod.__getattr__ = functools.partial(_real, real)
    FakeLearner.created = []
    monkeypatch.setitem(sys.modules, "crossbow._C", mod)
    monkeypatch.setattr(crossbow, "_C", mod, raising=False)
    return mod


def hide_C(monkeypatch):
    """Makes crossbow._C unimportable from here on, as before the C++ build (a test that
    needs a net built first calls it after building)."""
    monkeypatch.setitem(sys.modules, "crossbow._C", None)
    monkeypatch.delattr(crossbow, "_C", raising=False)


@pytest.fixture
def no_C(monkeypatch):
    """Makes crossbow._C unimportable, as before the C++ build."""
    hide_C(monkeypatch)


needs_C = pytest.mark.skipif(not _native.available(),
                             reason="crossbow._C is not built (scripts/setup.sh)")


def binomial_margin(accuracy, images, runs=2):
    """Four standard deviations of an accuracy measured on `images` test images (runs=1), or
    of the difference between two runs' accuracies on them (runs=2, their errors taken as
    independent: the widest case): chance crosses it about once in 16,000 tries. The spread
    is the test set's alone; that of training (two runs part after their first rounding)
    comes on top, so a bound at this margin is the tightest a test may set."""
    return 4 * np.sqrt(runs * accuracy * (1 - accuracy) / images)


# Below this a float32 softmax's probability (logits about 70 apart) has no resolvable logarithm,
# and 0 (an underflow) none at all: such classes are compared as negligible on both sides.
RESOLVED_PROBABILITY = 1e-30


def log_probability_gap(got, want):
    """The largest |log p - log q| / max(1, |log q|) over the classes `want` resolves: relative
    where logits far apart give log-probabilities of tens (fp32 resolves them to a few parts
    in a million of themselves), absolute near the top class. Infinite where `got` gives one of
    the unresolved classes a probability that is not negligible (above 1e-25)."""
    assert got.shape == want.shape
    resolved = want >= RESOLVED_PROBABILITY
    if np.any(got[~resolved] > 1e-25):
        return np.inf
    log_want = np.log(want[resolved])
    gap = np.abs(np.log(got[resolved]) - log_want) / np.maximum(1, np.abs(log_want))
    return float(gap.max())


def assert_same_log_probabilities(got, want, tolerance):
    """Class probabilities compared as logarithms (log_probability_gap): each probability
    within a fraction of itself however small it is, where an absolute 1e-4 on probabilities
    would allow 10% of a 1,000-class net's."""
    gap = log_probability_gap(got, want)
    assert gap <= tolerance, f"log-probabilities differ by {gap} (tolerance {tolerance})"


def small_variance_bn_net(epsilon):
    """Conv, batch norm with `epsilon`, ReLU, pooling, FC; running variances of 1e-4 to 1e-3, so
    that epsilon moves every normalised value (1e-5 instead of 1e-3 moves them ~2x), where the
    zoo's default 1e-5 next to variances of about 1 moves nothing."""
    m = crossbow.ModelBuilder("small_variances")
    x = m.relu(m.spatial_bn(m.conv(m.input("data", shape=(3, 8, 8)), 8, kernel=3, pad=1,
                                   name="c"), name="bn", epsilon=epsilon))
    m.softmax_loss(m.fc(m.global_avg_pool(x), 10, name="fc"), "label")
    model = crossbow.Model(m)
    rng = np.random.default_rng(4)
    model.set_param("bn_rv", rng.uniform(1e-4, 1e-3, 8).astype(np.float32))
    model.set_param("bn_rm", rng.normal(0, 0.01, 8).astype(np.float32))
    model.set_param("bn_s", rng.uniform(0.05, 0.15, 8).astype(np.float32))
    return model
