"""Mixup and CutMix (--mixup-alpha, --cutmix-alpha): the mixed batch and the mixed loss against
numpy, the loader's batches, the flags' checks, evaluation left alone, and short real runs."""
import os
import shutil
import subprocess

import numpy as np
import pytest

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

import crossbow  # noqa: E402
from crossbow import cli, convert, trainer  # noqa: E402
from crossbow.builder import ModelBuilder  # noqa: E402
from crossbow.data import ImageDB  # noqa: E402
from conftest import ROOT  # noqa: E402
from test_scoring import digits_lmdb  # noqa: E402

SAMPLE = os.path.join(ROOT, "data", "samples", "cifar10")


def images(n=6, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 3, 9, 11)).astype(np.float32),
            rng.integers(0, 10, n).astype(np.int32))


@pytest.mark.parametrize("index", range(4))
def test_mixup_blends_each_image_with_its_partner(index):
    x, y = images()
    d = _C.mix_batch(x, y, mixup_alpha=0.4, seed=3, epoch=1, index=index)
    perm, lam = np.array(d["perm"]), float(d["lam"][0])
    assert not d["cutmix"] and sorted(perm) == list(range(len(y)))
    assert 0 <= lam <= 1 and np.all(d["lam"] == d["lam"][0])
    np.testing.assert_array_equal(d["labels_b"], y[perm])
    expected = np.float32(lam) * x + np.float32(1 - lam) * x[perm]
    np.testing.assert_allclose(d["images"], expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("index", range(4))
def test_cutmix_pastes_the_partners_box_and_lam_is_the_area_left(index):
    x, y = images()
    d = _C.mix_batch(x, y, cutmix_alpha=1.0, seed=3, epoch=0, index=index)
    perm = np.array(d["perm"])
    top, bottom, left, right = d["box"]
    assert d["cutmix"] and 0 <= top <= bottom <= 9 and 0 <= left <= right <= 11
    expected = x.copy()
    expected[:, :, top:bottom, left:right] = x[perm][:, :, top:bottom, left:right]
    np.testing.assert_array_equal(d["images"], expected)
    np.testing.assert_allclose(d["lam"], 1 - (bottom - top) * (right - left) / (9 * 11),
                               rtol=1e-6)
    np.testing.assert_array_equal(d["labels_b"], y[perm])


def test_the_loader_mixes_its_batches_from_the_seed_and_their_place(tmp_path):
    db, _, _ = digits_lmdb(tmp_path, 40, 1)
    plain = ImageDB(str(db), 8, train=True, seed=5, workers=2).source
    mixed = ImageDB(str(db), 8, train=True, seed=5, workers=1).source
    assert mixed.set_mix(mixup_alpha=0.3, cutmix_alpha=0.5)
    for _ in range(7):
        x, y, epoch, index, _ = plain.next_batch()
        mx, my, labels_b, lam, m_epoch, m_index, _ = mixed.next_mixed_batch()
        assert (epoch, index) == (m_epoch, m_index)
        d = _C.mix_batch(x, y, mixup_alpha=0.3, cutmix_alpha=0.5, seed=5, epoch=epoch,
                         index=index)
        np.testing.assert_array_equal(mx, d["images"])
        np.testing.assert_array_equal(my, y)
        np.testing.assert_array_equal(labels_b, d["labels_b"])
        np.testing.assert_array_equal(lam, d["lam"])
    test = ImageDB(str(db), 8, train=False).source
    with pytest.raises(ValueError, match="mix training batches; this loader is an evaluation's"):
        test.set_mix(mixup_alpha=0.3)


def linear_model(label_smoothing):
    """No batch norm, so that inference's probabilities are training's."""
    m = ModelBuilder("linear")
    x = m.input("data", shape=(3, 9, 11))
    m.softmax_loss(m.fc(m.relu(m.conv(x, 4, kernel=3, pad=1)), 10), "label")
    return crossbow.Model(m, seed=1, label_smoothing=label_smoothing, weight_decay=0.0)


@pytest.mark.parametrize("e", [0.0, 0.1])
def test_the_mixed_loss_and_its_gradient_against_numpy(e):
    """loss = mean lam CE_e(y) + (1 - lam) CE_e(y_b); d loss / d logits = (p - q) / N, so the
    last FC bias gets the mean of p - q, q = lam q_e(y) + (1 - lam) q_e(y_b)."""
    x, y = images(8, 2)
    y_b = np.roll(y, 3)
    lam = np.linspace(0.05, 1.0, 8).astype(np.float32)
    model = linear_model(e)
    p = model.predict(x).astype(np.float64)
    onehot = np.eye(10)
    q_a, q_b = (1 - e) * onehot[y] + e / 10, (1 - e) * onehot[y_b] + e / 10
    q = lam[:, None] * q_a + (1 - lam[:, None]) * q_b
    log_p = np.log(p)
    expected = np.mean(lam * -(q_a * log_p).sum(1) + (1 - lam) * -(q_b * log_p).sum(1))
    loss = model.learner.forward_backward(x, y, y_b, lam)
    assert loss == pytest.approx(expected, rel=1e-5)
    bias = next(n for n in model.param_names() if n.endswith("_b") and "fc" in n)
    np.testing.assert_allclose(model.learner.gradient(bias), (p - q).mean(0), atol=1e-6)
    # Mixed with itself at any lam, a batch is the unmixed one.
    assert model.learner.forward_backward(x, y, y, lam) == pytest.approx(
        model.learner.forward_backward(x, y), rel=1e-6)


@pytest.mark.parametrize("options, message", [
    (dict(mixup_alpha=-0.5), r"mixup_alpha \(--mixup-alpha\) must be finite and >= 0, got -0.5"),
    (dict(cutmix_alpha=float("nan")), r"cutmix_alpha \(--cutmix-alpha\) must be finite"),
    (dict(cutmix_alpha=float("inf")), r"cutmix_alpha \(--cutmix-alpha\) must be finite"),
])
def test_bad_alphas_fail_before_any_work_naming_the_flag(tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        trainer.Trainer("no_such_net", str(tmp_path / "nowhere"), epochs=1, **options)


def test_the_command_line_rejects_a_bad_alpha(tmp_path, capsys):
    assert cli.main(["train", "--net", "lenet", "--train-db", str(tmp_path), "--epochs", "1",
                     "--mixup-alpha", "nan"]) == 1
    assert "mixup_alpha (--mixup-alpha) must be finite and >= 0, got nan" in \
        capsys.readouterr().err


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "build", "crossbow_train")),
                    reason="build/crossbow_train not built")
def test_crossbow_train_rejects_a_bad_alpha_before_reading_anything():
    done = subprocess.run([os.path.join(ROOT, "build", "crossbow_train"), "--cutmix_alpha", "nan",
                           "--spec", "/nonexistent", "--train_db", "/nowhere"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "cutmix_alpha (--cutmix-alpha) must be finite and >= 0, got nan" in done.stdout


def test_a_source_that_cannot_mix_is_refused():
    x = np.zeros((8, 1, 28, 28), np.float32)
    with pytest.raises(ValueError, match=r"--mixup-alpha\) and cutmix_alpha \(--cutmix-alpha\) "
                                         "need a training source that mixes"):
        crossbow.Trainer(net="lenet", train_db=(x, np.zeros(8, np.int32)), batch_size=4,
                         iterations=1, mixup_alpha=0.2, progress=False).fit()


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    for split in ("train", "test"):
        convert.image_folders(os.path.join(SAMPLE, split) + "/", out / split, progress=False)
    return out


def test_training_with_mixup_and_cutmix_on_the_sample(sample, tmp_path, capsys):
    metrics = tmp_path / "m.jsonl"
    assert cli.main(["train", "--net", "resnet20", "--train-db", str(sample / "train"),
                     "--test-db", str(sample / "test"), "--batch-size", "16", "--learners", "2",
                     "--iterations", "6", "--eval-every", "6", "--mixup-alpha", "0.4",
                     "--cutmix-alpha", "1.0", "--workers", "1", "--metrics", str(metrics),
                     "--no-progress"]) == 0
    records = [r for r in map(__import__("json").loads, metrics.read_text().splitlines())]
    assert all(np.isfinite(r["loss"]) for r in records if r.get("loss") is not None)
    assert records[-1]["accuracy"] is not None


def test_evaluation_never_mixes(tmp_path):
    """Runs resumed from one checkpoint, one mixing its training batches: each run's own
    evaluation is evaluate() of its final checkpoint, which reads the test set unmixed."""
    (tmp_path / "train").mkdir()
    (tmp_path / "test").mkdir()
    train, _, _ = digits_lmdb(tmp_path / "train", 64, 1)
    test, _, _ = digits_lmdb(tmp_path / "test", 48, 2)
    options = dict(net="lenet", train_db=str(train), test_db=str(test), batch_size=8,
                   learners=1, workers=1, progress=False, seed=4)
    first = tmp_path / "first"
    crossbow.Trainer(iterations=2, checkpoint_dir=str(first), **options).fit()
    for alpha in (0.0, 1.0):
        folder = tmp_path / f"alpha{alpha}"
        shutil.copytree(first, folder)
        got = crossbow.Trainer(iterations=4, eval_every=4, checkpoint_dir=str(folder),
                               resume=True, cutmix_alpha=alpha, **options).fit()
        again = trainer.evaluate("lenet", str(folder), str(test), batch_size=8, workers=1)
        assert got["accuracy"] == again["top1"] and got["top5"] == again["top5"]
        assert got["test_loss"] == pytest.approx(again["loss"], rel=1e-6)
