"""Bad nets and bad numbers sent straight to the C++ learner (past the builder's own checks):
each must come back as a clear Python exception naming the operator and blob, never a crash."""
import json

import numpy as np
import pytest

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

from crossbow import ModelBuilder  # noqa: E402


def spec():
    m = ModelBuilder("probe")
    x = m.input("data", shape=(3, 8, 8))
    x = m.relu(m.conv(x, 4, kernel=3, pad=1))
    m.softmax_loss(m.fc(x, 5), "label")
    return m.to_spec(lr=0.1)


def op(s, op_type):
    return next(o for o in s["net"]["ops"] if o["type"] == op_type)


def step(s, n=2):
    learner = _C.Learner(json.dumps(s))
    x = np.random.default_rng(0).standard_normal((n, 3, 8, 8)).astype(np.float32)
    return learner.step(x, np.zeros(n, np.int32))


def test_unknown_operator():
    s = spec()
    op(s, "Relu")["type"] = "Rleu"
    with pytest.raises(ValueError, match="unknown operator 'Rleu'; did you mean 'Relu'"):
        step(s)


def test_wrong_number_of_inputs():
    s = spec()
    relu = op(s, "Relu")
    relu["inputs"] = relu["inputs"] * 2
    with pytest.raises(ValueError, match="Relu.* takes 1 inputs but was given 2"):
        step(s)


def test_shape_mismatch_names_operator_input_and_both_shapes():
    s = spec()
    fc_w = next(o for o in s["init_net"]["ops"] if o["outputs"] == [op(s, "FC")["inputs"][1]])
    fc_w["args"]["shape"] = [5, 17]
    with pytest.raises(ValueError, match=r"FC.*\[5, 17\].*256|FC.*256.*\[5, 17\]"):
        step(s)


def test_blob_that_nothing_produces():
    s = spec()
    op(s, "FC")["inputs"][0] = "no_such_blob"
    with pytest.raises(ValueError, match="reads blob 'no_such_blob'"):
        step(s)


def test_nan_loss_names_the_iteration_and_keeps_the_weights():
    learner = _C.Learner(json.dumps(spec()))
    fc_bias = next(n for n in learner.param_names() if n.startswith("fc") and n.endswith("_b"))
    bias = learner.get(fc_bias)
    bias[0] = np.nan
    learner.set(fc_bias, bias)
    conv_w = next(n for n in learner.param_names() if n.endswith("_w"))
    before = learner.get(conv_w)
    x = np.ones((2, 3, 8, 8), np.float32)
    with pytest.raises(RuntimeError, match="loss is nan at iteration 0"):
        learner.step(x, np.zeros(2, np.int32))
    np.testing.assert_array_equal(learner.get(conv_w), before)


def test_wrong_dtype_and_shape_straight_into_cpp():
    learner = _C.Learner(json.dumps(spec()))
    x = np.zeros((2, 3, 8, 8), np.float64)
    with pytest.raises(ValueError, match="float32"):
        learner.step(x, np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="int32"):
        learner.step(x.astype(np.float32), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match=r"\[N, 3, 8, 8\]"):
        learner.step(np.zeros((2, 3, 8, 9), np.float32), np.zeros(2, np.int32))
    with pytest.raises(ValueError, match="labels must have shape"):
        learner.step(np.zeros((2, 3, 8, 8), np.float32), np.zeros(3, np.int32))


def test_malformed_spec():
    with pytest.raises(ValueError, match="malformed learner spec"):
        _C.Learner("{not json")
