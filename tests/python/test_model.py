"""Model: numpy checks before C++, batching, and what reaches the learner (a fake _C)."""
import json

import numpy as np
import pytest

import crossbow
from crossbow import nets
from conftest import hide_C, needs_C

X = np.zeros((4, 1, 28, 28), np.float32)
Y = np.array([0, 1, 2, 3], np.int32)


@pytest.fixture
def lenet(fake_C):
    return nets.build("lenet", lr=0.05)


def test_learner_is_created_once_from_the_spec_json(lenet, fake_C):
    assert fake_C.Learner.created == []
    assert lenet.step(X, Y) == 2.25
    lenet.step(X, Y)
    (learner,) = fake_C.Learner.created
    assert learner.spec == json.loads(json.dumps(lenet.spec))
    assert learner.spec["solver"]["lr"] == 0.05


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.uint8, np.int32])
def test_images_must_be_float32(lenet, dtype):
    with pytest.raises(TypeError, match=f"expected dtype float32, got {np.dtype(dtype)}.*"
                                        r"\(4, 1, 28, 28\)"):
        lenet.step(X.astype(dtype), Y)


@pytest.mark.parametrize("shape", [(4, 28, 28), (4, 3, 28, 28), (4, 1, 32, 32), (1, 28, 28)])
def test_images_must_match_the_input_shape(lenet, shape):
    with pytest.raises(ValueError, match=r"expected shape \(N, 1, 28, 28\), got"):
        lenet.predict(np.zeros(shape, np.float32))


def test_images_must_be_arrays_contiguous_and_non_empty(lenet):
    with pytest.raises(TypeError, match="numpy.ndarray"):
        lenet.step(X.tolist(), Y)
    with pytest.raises(ValueError, match="C-contiguous"):
        lenet.step(np.zeros((4, 1, 28, 56), np.float32)[..., ::2], Y)
    with pytest.raises(ValueError, match="empty"):
        lenet.predict(np.zeros((0, 1, 28, 28), np.float32))


def test_int64_labels_become_int32(lenet, fake_C):
    lenet.step(X, Y.astype(np.int64))
    _, _, labels = fake_C.Learner.created[0].calls[-1]
    assert labels.dtype == np.int32 and labels.flags.c_contiguous
    np.testing.assert_array_equal(labels, Y)


def test_labels_are_checked(lenet):
    with pytest.raises(TypeError, match="integer dtype.*float32"):
        lenet.step(X, Y.astype(np.float32))
    with pytest.raises(ValueError, match=r"expected shape \(4,\), one per image, got \(3,\)"):
        lenet.step(X, Y[:3])
    with pytest.raises(ValueError, match=r"\[0, 9\], found 10"):
        lenet.step(X, np.array([0, 1, 10, 3]))
    with pytest.raises(ValueError, match="found -1"):
        lenet.evaluate(X, np.array([0, -1, 2, 3]))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        lenet.step(X, [0, 1, 2, 3])


@needs_C
def test_checks_run_before_cpp_even_without_the_extension(monkeypatch):
    model = nets.build("lenet")
    hide_C(monkeypatch)
    with pytest.raises(TypeError, match="float32"):
        model.step(X.astype(np.float64), Y)
    with pytest.raises(ImportError, match="scripts/setup.sh"):
        model.step(X, Y)


def test_evaluate_weights_batches_by_size(lenet, fake_C):
    x = np.zeros((250, 1, 28, 28), np.float32)
    y = np.ones(250, np.int32)
    y[:10] = 0  # the fake's top-1 is the fraction of label 0
    r = lenet.evaluate(x, y, batch_size=100)
    assert r == {"loss": 1.0, "top1": pytest.approx(10 / 250), "top5": 1.0}
    sizes = [len(c[1]) for c in fake_C.Learner.created[0].calls]
    assert sizes == [100, 100, 50]
    with pytest.raises(ValueError, match="batch_size"):
        lenet.evaluate(x, y, batch_size=0)


def test_predict_in_batches(lenet, fake_C):
    x = np.zeros((7, 1, 28, 28), np.float32)
    assert lenet.predict(x).shape == (7, 10)
    assert lenet.predict(x, batch_size=3).shape == (7, 10)
    assert [len(c[1]) for c in fake_C.Learner.created[0].calls] == [7, 3, 3, 1]


def test_learning_rate_before_and_after_the_learner_exists(lenet, fake_C):
    lenet.set_learning_rate(0.5)
    lenet.step(X, Y)
    assert fake_C.Learner.created[0].spec["solver"]["lr"] == 0.5
    lenet.set_learning_rate(0.01)
    assert fake_C.Learner.created[0].lr == 0.01
    with pytest.raises(ValueError):
        lenet.set_learning_rate(-1)


def test_params_by_name(lenet, fake_C):
    assert lenet.param_names()[:2] == ["conv1_w", "conv1_b"]
    w = np.ones((20, 1, 5, 5), np.float32)
    lenet.set_param("conv1_w", w)
    np.testing.assert_array_equal(lenet.get_param("conv1_w"), w)
    with pytest.raises(KeyError, match="did you mean 'conv1_w'"):
        lenet.get_param("conv1_W")
    with pytest.raises(TypeError, match="float32"):
        lenet.set_param("conv1_w", w.astype(np.float64))
    with pytest.raises(ValueError, match=r"expected shape \(20, 1, 5, 5\)"):
        lenet.set_param("conv1_w", w[:10])


def test_state_blobs_are_reachable(fake_C):
    model = nets.build("resnet20")
    model.set_param("conv1_bn_rm", np.zeros(16, np.float32))


def test_save_and_load_take_paths(lenet, tmp_path):
    lenet.set_param("ip2_b", np.arange(10, dtype=np.float32))
    lenet.save(tmp_path / "ckpt")
    other = nets.build("lenet")
    other.load(tmp_path / "ckpt")
    np.testing.assert_array_equal(other.get_param("ip2_b"), np.arange(10))
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        other.load(tmp_path / "missing")


def test_repr(lenet):
    # (memory_stats and the operator list come from C++: test_native.py checks them)
    assert "431,080" in repr(lenet) and "lr=0.05" in repr(lenet)


def test_package_api():
    assert crossbow.ModelBuilder and crossbow.Model and crossbow.nets.NAMES


def test_operators_without_the_extension(no_C):
    with pytest.raises(ImportError, match=r"not built.*scripts/setup.sh"):
        crossbow.operators()


@needs_C
def test_defaults_are_the_option_tables_library_defaults(monkeypatch):
    """One default per option: Model's are the table's library defaults, the commands' its
    defaults, apart only where the table says so (weight decay: none unless asked)."""
    from crossbow import trainer
    table = trainer.option_table()
    solver = nets.build("lenet").spec["solver"]
    assert solver["weight_decay"] == table["weight_decay"].library_default == 0
    assert table["weight_decay"].default == 1e-4
    for key, name in [("lr", "lr"), ("momentum", "momentum"), ("nesterov", "nesterov"),
                      ("bias_decay", "bias_decay"), ("type", "optimizer"),
                      ("momentum_convention", "momentum_convention")]:
        assert solver[key] == table[name].library_default == table[name].default, name
    monkeypatch.setitem(table, "momentum", table["momentum"]._replace(library_default=0.5))
    monkeypatch.setitem(table, "weight_decay", table["weight_decay"]._replace(library_default=0.25))
    solver = nets.build("lenet").spec["solver"]
    assert (solver["momentum"], solver["weight_decay"]) == (0.5, 0.25)
