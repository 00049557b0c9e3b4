"""The memory planner on every zoo net: a learner whose blobs share buffers by liveness and one
whose blobs each have their own (spec "plan_memory": false) must agree bit for bit on the
loss, every gradient, parameter and statistic after several steps, and on predictions. Two
live blobs in one buffer change some of these numbers."""
import numpy as np
import pytest

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

from crossbow import nets  # noqa: E402


def twins(name):
    planned, unplanned = nets.build(name, lr=0.01, seed=3), nets.build(name, lr=0.01, seed=3)
    unplanned.spec["plan_memory"] = False
    return planned, unplanned


@pytest.mark.parametrize("name", nets.NAMES)
def test_planned_and_unplanned_agree_bit_for_bit(name):
    planned, unplanned = twins(name)
    rng = np.random.default_rng(0)
    n = 2 if name == "resnet50" else 4
    for step in range(3):
        x = rng.standard_normal((n,) + planned.input_shape).astype(np.float32)
        y = rng.integers(0, planned.num_classes, n).astype(np.int32)
        a, b = planned.learner, unplanned.learner
        assert a.forward_backward(x, y) == b.forward_backward(x, y), f"loss, step {step}"
        for param in a.param_names():
            np.testing.assert_array_equal(a.gradient(param), b.gradient(param),
                                          err_msg=f"gradient of {param}, step {step}")
        a.update()
        b.update()
    momenta = [p + "_momentum" for p in a.param_names()]
    for blob in a.param_names() + momenta + a.state_names():
        np.testing.assert_array_equal(a.get(blob), b.get(blob), err_msg=blob)
    np.testing.assert_array_equal(planned.predict(x), unplanned.predict(x))
    stats = planned.memory_stats()
    assert stats["planned_bytes"] < stats["unplanned_bytes"]
