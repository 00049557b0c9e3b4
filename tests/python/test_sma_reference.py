"""SMA against the numpy reference (sync_oracle.py): a softmax regression, 2 devices x 2
learners, fixed batches from an in-memory source; every weight equal after N iterations."""
import json

import numpy as np
import pytest

from crossbow import ModelBuilder
from sync_oracle import Reference

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

LR, MU, WD, ALPHA, MU_Z = 0.1, 0.9, 1e-3, 0.2, 0.9
DEVICES, K, B, ITERATIONS = 2, 2, 5, 12


def spec():
    m = ModelBuilder("softmax_regression")
    x = m.input("data", shape=(3, 2, 2))
    m.softmax_loss(m.fc(x, 4, name="fc"))
    return json.dumps(m.to_spec(lr=LR, momentum=MU, weight_decay=WD, seed=5))


def data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n).astype(np.int32)
    images = (rng.normal(size=(n, 3, 2, 2)) + labels[:, None, None, None] * 0.3).astype(np.float32)
    return images, labels


def engine(images, labels, devices="cpu:0,cpu:1", k=K, sync="sma"):
    options = _C.EngineOptions(devices=devices, learners=k, sync=sync, alpha=ALPHA,
                               central_momentum=MU_Z)
    return _C.Engine(spec(), options, _C.ArraySource(images, labels, B))


def reference_sma(start, images, labels):
    ref = Reference(start, ["fc_w", "fc_b"], [], DEVICES * K, lr=LR, mu=MU, wd=WD, batch=B,
                    alpha=ALPHA, mu_z=MU_Z)
    for t in range(ITERATIONS):
        ref.iterate(t, images, labels)
    return ref.z, ref.central, ref.w, ref.v


def test_sma_matches_the_numpy_reference():
    images, labels = data()
    e = engine(images, labels)
    start = e.state()
    z0 = {name: start["z/" + name] for name in ("fc_w", "fc_b")}
    for _ in range(ITERATIONS):
        e.iterate()
    got = e.state()
    z, z_prev, w, v = reference_sma(start, images, labels)
    for name in ("fc_w", "fc_b"):
        np.testing.assert_allclose(got["z/" + name], z[name], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got["z_prev/" + name], z_prev[name], rtol=1e-4, atol=1e-5)
        for j in range(DEVICES * K):
            np.testing.assert_allclose(got[f"learner{j}/{name}"], w[j][name], rtol=1e-4,
                                       atol=1e-5, err_msg=f"learner {j}")
            np.testing.assert_allclose(got[f"learner{j}/{name}_momentum"], v[j][name],
                                       rtol=1e-4, atol=1e-5, err_msg=f"learner {j}")
    # The learners really moved apart and back: the test would pass vacuously otherwise.
    assert np.abs(z["fc_w"] - z0["fc_w"]).max() > 1e-2
    assert min(e.distances_to_average()) > 0


def test_engine_reports_iterations_and_evaluates_z():
    images, labels = data()
    e = engine(images, labels)
    r = e.iterate()
    assert r.images == DEVICES * K * B and len(r.learner_losses) == DEVICES * K
    assert e.iteration == 1 and e.num_learners == 4
    loss, top1, top5 = e.evaluate(_C.ArraySource(images, labels, 7))
    assert np.isfinite(loss) and 0 <= top1 <= top5 == 1.0


def test_bad_options_and_inputs_are_value_errors():
    with pytest.raises(ValueError, match="unknown device 'gpu:0'"):
        _C.EngineOptions(devices="gpu:0")
    with pytest.raises(ValueError, match=r"sync \(--sync\) must be .*, got 'async'"):
        _C.EngineOptions(sync="async")
    images, labels = data()
    with pytest.raises(ValueError, match="sgd' trains one learner"):
        engine(images, labels, sync="sgd")
    with pytest.raises(ValueError, match="labels must be a numpy array of int32"):
        _C.ArraySource(images, labels.astype(np.int64), 4)


def test_autotuner_decisions_on_a_trace():
    options = _C.AutotunerOptions()
    options.memory_limit_bytes = 1 << 30
    r = _C.Autotuner(options).run_trace({1: 100.0, 2: 130.0, 3: 135.0, 4: 140.0, 5: 142.0},
                                        1 << 20)
    assert r.learners_per_device == 2
    assert [d.action for d in r.decisions] == ["start", "confirm", "confirm", "confirm",
                                               "add: confirmed", "look ahead", "look ahead",
                                               "step back"]
    assert [d.learners_per_device for d in r.decisions[1:4]] == [2, 2, 1]
    assert r.decisions[-1].images_per_second == 142.0
    options.confirm_adds = False
    r = _C.Autotuner(options).run_trace({1: 100.0, 2: 130.0, 3: 135.0, 4: 140.0, 5: 142.0},
                                        1 << 20)
    assert [d.action for d in r.decisions] == ["start", "add", "look ahead", "look ahead",
                                               "step back"]
    options.look_ahead = 0
    r = _C.Autotuner(options).run_trace({1: 100.0, 2: 130.0, 3: 135.0}, 1 << 20)
    assert [d.action for d in r.decisions] == ["start", "add", "step back"]
