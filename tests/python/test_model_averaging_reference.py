"""The model-averaging family (SMA with a period and Nesterov central momentum, EASGD, local
SGD, DiLoCo) against the numpy reference (sync_oracle.py), on a net with
batch norm, 2 devices x 2 learners, checked after every iteration: every tensor of z, of the
central buffer and of each learner. Then the invariants between them, and resuming mid-period."""
import numpy as np
import pytest

from sync_oracle import Reference
from test_sync_reference import ALPHA, B, LR, MU, MU_Z, TOL, WD, data, spec

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

PARAMS, STATS = ["bn_s", "bn_b", "fc_w", "fc_b"], ["bn_rm", "bn_rv"]
K, ITERATIONS, OUTER_LR, OUTER_MU = 2, 12, 0.7, 0.9
MODES = {  # name: engine options
    "sma_period_3": dict(sync="sma", sync_period=3),
    "sma_nesterov_period_2": dict(sync="sma", sync_period=2, central_momentum_type="nesterov"),
    "easgd_period_3": dict(sync="easgd", sync_period=3),
    "localsgd_period_3": dict(sync="localsgd", sync_period=3),
    "localsgd_warmup_4_period_3": dict(sync="localsgd", sync_period=3, sync_warmup=4),
    "diloco_period_3": dict(sync="diloco", sync_period=3),
}


def engine(images, labels, devices="cpu:0,cpu:1", k=K, **options):
    o = dict(devices=devices, learners=k, alpha=ALPHA, central_momentum=MU_Z, outer_lr=OUTER_LR,
             outer_momentum=OUTER_MU)
    o.update(options)
    return _C.Engine(spec(True), _C.EngineOptions(**o), _C.ArraySource(images, labels, B))


def reference(start, n, alpha=ALPHA, **options):
    """The oracle with this file's net and hyperparameters; `options` the engine's."""
    return Reference(start, PARAMS, STATS, n, lr=LR, mu=MU, wd=WD, batch=B, alpha=alpha,
                     mu_z=MU_Z, outer_lr=OUTER_LR, outer_mu=OUTER_MU, **options)


def central_name(options):
    nesterov = options.get("central_momentum_type") == "nesterov"
    return "z_velocity" if nesterov or options["sync"] == "diloco" else "z_prev"


def assert_state(got, ref, central, where):
    for name in PARAMS:
        np.testing.assert_allclose(got["z/" + name], ref.z[name], **TOL,
                                   err_msg=f"z/{name} {where}")
        np.testing.assert_allclose(got[f"{central}/{name}"], ref.central[name], **TOL,
                                   err_msg=f"{central}/{name} {where}")
    for name in STATS:
        np.testing.assert_allclose(got["z/" + name], ref.z_stats[name], **TOL,
                                   err_msg=f"z/{name} {where}")
    for j in range(ref.n):
        for name in PARAMS:
            np.testing.assert_allclose(got[f"learner{j}/{name}"], ref.w[j][name], **TOL,
                                       err_msg=f"learner {j} {name} {where}")
            np.testing.assert_allclose(got[f"learner{j}/{name}_momentum"], ref.v[j][name], **TOL,
                                       err_msg=f"learner {j} {name}_momentum {where}")
        for name in STATS:
            np.testing.assert_allclose(got[f"learner{j}/{name}"], ref.stats[j][name], **TOL,
                                       err_msg=f"learner {j} {name} {where}")


@pytest.mark.parametrize("mode", sorted(MODES))
def test_matches_the_numpy_reference_after_every_iteration(mode):
    options = MODES[mode]
    images, labels = data()
    e = engine(images, labels, **options)
    start = e.state()
    ref = reference(start, 2 * K, **options)
    for t in range(ITERATIONS):
        e.iterate()
        ref.iterate(t, images, labels)
        assert_state(e.state(), ref, central_name(options), f"after iteration {t}")
    # Not vacuous: z moved, its statistics are the learners' and the learners went apart.
    assert np.abs(ref.z["fc_w"] - start["z/fc_w"]).max() > 1e-2
    assert np.abs(ref.z_stats["bn_rv"] - 1).max() > 0.1
    assert np.abs(ref.central["fc_w"] - ref.z["fc_w"]).max() > 1e-4
    distances = e.distances_to_average()
    # Learners are apart after the last iteration unless it replaced them by z.
    replaced = ref.synchronises(ITERATIONS - 1) and options["sync"] in ("localsgd", "diloco")
    assert (max(distances) > 1e-3) != replaced


@pytest.mark.parametrize("mode", ["sma_period_3", "diloco_period_3"])
def test_running_ahead_matches_the_numpy_reference(mode):
    # Each iteration posts the next (iterate's next_rate): learners start it while others
    # finish, and train exactly as one iteration at a time. The state cannot be read while an
    # iteration is posted ahead, so it is checked once, after the last.
    options = MODES[mode]
    images, labels = data()
    e = engine(images, labels, **options)
    ref = reference(e.state(), 2 * K, **options)
    for t in range(ITERATIONS):
        e.iterate(next_rate=LR if t + 1 < ITERATIONS else None)
        ref.iterate(t, images, labels)
        if t == 0:
            with pytest.raises(RuntimeError, match="iteration 1 was posted ahead"):
                e.state()
    assert_state(e.state(), ref, central_name(options), f"after iteration {ITERATIONS - 1}")


@pytest.mark.parametrize("sync", ["sma", "easgd"])
@pytest.mark.parametrize("k, alpha", [(2, 1 / 4), (6, 1 / 12)])
def test_alpha_auto_follows_the_learner_count_as_the_autotuner_changes_it(sync, k, alpha):
    # alpha auto: 1/N from 2 learners on; here N = 2 devices x k, set after the
    # engine started with 1 learner per device, as the autotuner sets it.
    images, labels = data()
    e = engine(images, labels, k=1, sync=sync, alpha="auto")
    e.set_learners_per_device(k)
    ref = reference(e.state(), 2 * k, alpha=alpha, sync=sync, sync_period=1)
    for t in range(4):
        e.iterate()
        ref.iterate(t, images, labels)
        assert_state(e.state(), ref, "z_prev", f"after iteration {t}")


def test_diloco_with_outer_lr_1_and_no_momentum_is_localsgd():
    images, labels = data()
    local = engine(images, labels, sync="localsgd", sync_period=3)
    diloco = engine(images, labels, sync="diloco", sync_period=3, outer_lr=1.0, outer_momentum=0.0)
    for _ in range(ITERATIONS - 1):
        local.iterate()
        diloco.iterate()
    a, b = local.state(), diloco.state()
    for name in [n for n in a if not n.startswith("z_prev/")]:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert np.abs(a["learner0/fc_w"] - a["learner1/fc_w"]).max() > 1e-3  # mid-period: apart


def test_localsgd_warming_up_is_ssgd():
    images, labels = data()
    local = engine(images, labels, sync="localsgd", sync_period=5, sync_warmup=ITERATIONS)
    ssgd = engine(images, labels, sync="ssgd")
    start = local.state()
    for _ in range(ITERATIONS):
        local.iterate()
        ssgd.iterate()
    a, b = local.state(), ssgd.state()
    for j in range(2 * K):
        for name in PARAMS + STATS:
            key = f"learner{j}/{name}"
            np.testing.assert_allclose(a[key], b[key], rtol=1e-4, atol=1e-5, err_msg=key)
    assert np.abs(a["learner0/fc_w"] - start["learner0/fc_w"]).max() > 1e-2  # it trained


def test_sma_that_never_synchronises_leaves_its_learners_independent():
    images, labels = data()
    e = engine(images, labels, sync="sma", sync_period=ITERATIONS + 1)
    start = e.state()
    ref = reference(start, 2 * K, sync="sma", sync_period=ITERATIONS + 1)
    for t in range(ITERATIONS):
        e.iterate()
        ref.iterate(t, images, labels)
    got = e.state()
    assert_state(got, ref, "z_prev", "without a synchronisation")
    for name in PARAMS + STATS:
        np.testing.assert_array_equal(got["z/" + name], start["z/" + name])


@pytest.mark.parametrize("options", [dict(sync="localsgd", sync_period=1),
                                     dict(sync="diloco", sync_period=1, outer_lr=1.0,
                                          outer_momentum=0.0)], ids=["localsgd", "diloco"])
def test_one_learner_synchronising_every_iteration_is_plain_sgd(options):
    images, labels = data()
    e = engine(images, labels, devices="cpu:0", k=1, **options)
    sgd = engine(images, labels, devices="cpu:0", k=1, sync="sgd")
    for _ in range(ITERATIONS):
        e.iterate()
        sgd.iterate()
    a, b = e.state(), sgd.state()
    for name in PARAMS + STATS:
        for key in ("z/" + name, "learner0/" + name):
            np.testing.assert_allclose(a[key], b[key], rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_resuming_mid_period_continues_as_if_never_stopped(mode):
    images, labels = data(n=70)  # 14 batches: after 7 iterations of 4 the source is at batch 0
    straight, first = engine(images, labels, **MODES[mode]), engine(images, labels, **MODES[mode])
    for _ in range(7):
        straight.iterate()
        first.iterate()
    resumed = engine(images, labels, **MODES[mode])
    resumed.restore_state(first.state(), 7)
    for _ in range(5):
        straight.iterate()
        resumed.iterate()
    a, b = straight.state(), resumed.state()
    assert resumed.iteration == 12 and set(a) == set(b)
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-6, atol=1e-7, err_msg=name)


def test_bad_synchroniser_options_are_value_errors_naming_the_option():
    images, labels = data()
    with pytest.raises(ValueError, match=r"sync \(--sync\) must be .*, got 'dilco'; did you mean "
                                         r"'diloco'"):
        _C.EngineOptions(sync="dilco")
    with pytest.raises(ValueError, match="'epochs' is not an engine option"):
        _C.EngineOptions(epochs=3)
    for options, message in [
            (dict(sync="localsgd", sync_period=0), r"sync_period \(--sync-period\) must be > 0"),
            (dict(central_momentum_type="heavy"), "polyak or nesterov"),
            (dict(sync="diloco", outer_lr=0.0), r"outer_lr \(--outer-lr\) must be finite and > 0"),
            (dict(sync="diloco", outer_momentum=1.0), r"outer_momentum \(--outer-momentum\) must be"),
            (dict(sync="easgd", alpha=1.5), r"alpha \(--alpha\) must be in \(0, 1\]")]:
        with pytest.raises(ValueError, match=message):
            engine(images, labels, **options)


def test_every_registered_synchroniser_has_a_reference_test_and_a_flag():
    from crossbow.trainer import OPTIONS
    # ssgd: test_sync_reference.py; sgd: tests/cpp/engine_test.cc (bit-equal to Learner::Step)
    covered = {o["sync"] for o in MODES.values()} | {"ssgd", "sgd"}
    assert sorted(_C.sync_names()) == sorted(covered)
    assert all(name in OPTIONS["sync"].help for name in covered)
