"""Synchronisers against the numpy reference (sync_oracle.py): SMA on a net with batch norm,
2 devices x 3 learners, through a learning-rate drop (learners restart from z; z_prev goes on),
and S-SGD over 2 devices against one learner that takes the whole batch. Batch order: learner j
of iteration t reads batch (t n + j) mod batches."""
import json

import numpy as np
import pytest

from crossbow import ModelBuilder
from sync_oracle import Reference, forward_backward, split

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

LR, MU, WD, ALPHA, MU_Z = 0.2, 0.9, 1e-3, 0.2, 0.9
B = 5
TOL = dict(rtol=2e-4, atol=2e-5)


def spec(batch_norm):
    m = ModelBuilder("bn_regression" if batch_norm else "softmax_regression")
    x = m.input("data", shape=(3, 2, 2))
    if batch_norm:
        x = m.spatial_bn(x, name="bn", scale_init=1.5)
    m.softmax_loss(m.fc(x, 4, name="fc"))
    return json.dumps(m.to_spec(lr=LR, momentum=MU, weight_decay=WD, seed=5))


def data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n).astype(np.int32)
    images = rng.normal(size=(n, 3, 2, 2)) * [[[1.0]], [[2.0]], [[0.5]]] + 0.7
    images += labels[:, None, None, None] * 0.3
    return images.astype(np.float32), labels


def engine(batch_norm, sync, k, images, labels):
    options = _C.EngineOptions(devices="cpu:0,cpu:1", learners=k, sync=sync, alpha=ALPHA,
                               central_momentum=MU_Z)
    return _C.Engine(spec(batch_norm), options, _C.ArraySource(images, labels, B))


def test_sma_with_batch_norm_and_a_learning_rate_drop_matches_numpy():
    params, stats, k = ["bn_s", "bn_b", "fc_w", "fc_b"], ["bn_rm", "bn_rv"], 3
    images, labels = data()
    e = engine(True, "sma", k, images, labels)
    ref = Reference(e.state(), params, stats, 2 * k, lr=LR, mu=MU, wd=WD, batch=B, alpha=ALPHA,
                    mu_z=MU_Z)
    schedule = [LR] * 5 + [LR / 10] * 4
    for t, lr in enumerate(schedule):
        if t > 0 and lr != schedule[t - 1]:
            e.set_learning_rate(lr)
            ref.restart()
            got = e.state()
            for j in range(2 * k):  # restarted from z, momentum zero, z's statistics
                for name in params + stats:
                    np.testing.assert_allclose(got[f"learner{j}/{name}"],
                                               got[f"z/{name}"], err_msg=f"restart {name}")
                for name in params:
                    assert not got[f"learner{j}/{name}_momentum"].any()
        e.iterate()
        ref.iterate(t, images, labels, lr=lr)
        got = e.state()
        for name in params:
            np.testing.assert_allclose(got["z/" + name], ref.z[name], **TOL,
                                       err_msg=f"z/{name} after iteration {t}")
            np.testing.assert_allclose(got["z_prev/" + name], ref.central[name], **TOL,
                                       err_msg=f"z_prev/{name} after iteration {t}")
        for name in stats:
            np.testing.assert_allclose(got["z/" + name], ref.z_stats[name], **TOL,
                                       err_msg=f"z/{name} after iteration {t}")
        for j in range(2 * k):
            for name in params:
                np.testing.assert_allclose(got[f"learner{j}/{name}"], ref.w[j][name], **TOL,
                                           err_msg=f"learner {j} {name}, iteration {t}")
                np.testing.assert_allclose(got[f"learner{j}/{name}_momentum"], ref.v[j][name],
                                           **TOL, err_msg=f"learner {j} {name}, iteration {t}")
            for name in stats:
                np.testing.assert_allclose(got[f"learner{j}/{name}"], ref.stats[j][name],
                                           **TOL, err_msg=f"learner {j} {name}, iteration {t}")
    # Not vacuous: the statistics moved, learners disagree, and z kept momentum over the drop.
    assert np.abs(ref.z_stats["bn_rv"] - 1).max() > 0.1
    assert len({float(ref.stats[j]["bn_rm"][0]) for j in range(2 * k)}) == 2 * k
    assert np.abs(ref.z["fc_w"] - ref.central["fc_w"]).max() > 1e-3


def test_ssgd_over_two_devices_is_one_learner_at_the_whole_batch():
    params, k, iterations = ["fc_w", "fc_b"], 2, 8
    images, labels = data()
    e = engine(False, "ssgd", k, images, labels)
    w = split(e.state(), "z/", params)
    start = {name: x.copy() for name, x in w.items()}
    v = {name: np.zeros_like(x) for name, x in w.items()}
    n, whole = 2 * k, 2 * k * B
    for t in range(iterations):
        e.iterate()
        i = (t * n) % (len(labels) // B)
        grads, _ = forward_backward(w, {}, images[i * B:i * B + whole],
                                    labels[i * B:i * B + whole])
        for name in params:
            v[name] = MU * v[name] - LR * (grads[name] + WD * w[name])
            w[name] += v[name]
    got = e.state()
    for name in params:
        np.testing.assert_allclose(got["z/" + name], w[name], **TOL, err_msg=name)
        for j in range(n):
            np.testing.assert_allclose(got[f"learner{j}/{name}"], w[name], **TOL,
                                       err_msg=f"learner {j} {name}")
            np.testing.assert_allclose(got[f"learner{j}/{name}_momentum"], v[name], **TOL,
                                       err_msg=f"learner {j} {name}")
    assert np.abs(w["fc_w"] - start["fc_w"]).max() > 1e-2  # it trained
