"""Shared fixtures: a source-tree import path, and a fake ``crossbow._C`` for the tests
that exercise the Python side of calls into C++ without the extension."""
import json
import os
import sys
import types

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import crossbow  # noqa: E402

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


def _infer_shapes(net_json, shapes, int_inputs):
    net = json.loads(net_json)
    out = dict(shapes)
    for op in net["ops"]:
        assert op["type"] == "Square", "the fake knows only Square"
        out[op["outputs"][0]] = list(out[op["inputs"][0]])
    return out


@pytest.fixture
def fake_C(monkeypatch):
    """Installs a fake crossbow._C module; returns it."""
    mod = types.ModuleType("crossbow._C")
    mod.operators = lambda: [(n, f"{n}: the operator.") for n in OPERATORS]
    mod.operator_doc = _operator_doc
    mod.infer_shapes = _infer_shapes
    mod.Learner = FakeLearner
    FakeLearner.created = []
    monkeypatch.setitem(sys.modules, "crossbow._C", mod)
    monkeypatch.setattr(crossbow, "_C", mod, raising=False)
    return mod


@pytest.fixture
def no_C(monkeypatch):
    """Makes crossbow._C unimportable, as before the C++ build."""
    monkeypatch.setitem(sys.modules, "crossbow._C", None)
    monkeypatch.delattr(crossbow, "_C", raising=False)
