"""How predictions are scored, through the real extension: Model.evaluate, the trainer's
evaluate_checkpoint and `crossbow eval` count a row holding a NaN, and a label tied with
another class, as misses (crossbow/core/top_k.h), as this numpy reading of the rule does."""
import re
import struct

import numpy as np
import pytest

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

import crossbow  # noqa: E402
from crossbow import cli, convert, nets, trainer  # noqa: E402


def numpy_top_k(prob, labels, k):
    """The fraction of rows whose label has fewer than k other classes scoring >= it, and no
    NaN anywhere."""
    target = prob[np.arange(len(labels)), labels]
    others_at_least = (prob >= target[:, None]).sum(axis=1) - 1
    return float(np.mean(~np.isnan(prob).any(axis=1) & (others_at_least < k)))


def digits(n, seed):
    """MNIST-shaped images whose label is a bright row, as uint8 pixels and labels."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) % 10).astype(np.uint8)
    pixels = rng.integers(0, 60, (n, 28, 28), dtype=np.uint8)
    pixels[np.arange(n), 2 * labels + 4, :] = 250
    return pixels, labels


def test_a_diverged_lenet_scores_zero():
    model = nets.build("lenet")
    pixels, labels = digits(20, 0)
    x = (pixels[:, None] / 255.0).astype(np.float32)
    b = model.get_param("ip2_b")
    b[3] = np.nan  # every probability of every row becomes NaN
    model.set_param("ip2_b", b)
    assert np.isnan(model.predict(x)).all()
    r = model.evaluate(x, labels.astype(np.int32))
    assert r["top1"] == 0.0 and r["top5"] == 0.0  # was 1.0 and 1.0


def test_equal_scores_are_misses():
    model = nets.build("lenet")
    model.set_param("ip2_w", np.zeros_like(model.get_param("ip2_w")))
    model.set_param("ip2_b", np.zeros_like(model.get_param("ip2_b")))
    pixels, labels = digits(20, 1)
    r = model.evaluate((pixels[:, None] / 255.0).astype(np.float32), labels.astype(np.int32))
    # Every class scores 0.1: nine others tie the label, so it is not even in the top five.
    assert r["top1"] == 0.0 and r["top5"] == 0.0
    assert r["loss"] == pytest.approx(np.log(10), rel=1e-6)


def test_evaluate_agrees_with_the_rule_on_its_own_predictions():
    model = nets.build("lenet", lr=0.02)
    pixels, labels = digits(64, 2)
    x, y = (pixels[:, None] / 255.0).astype(np.float32), labels.astype(np.int32)
    for _ in range(3):
        model.step(x[:32], y[:32])
    prob, r = model.predict(x), model.evaluate(x, y)
    assert r["top1"] == pytest.approx(numpy_top_k(prob, y, 1))
    assert r["top5"] == pytest.approx(numpy_top_k(prob, y, 5))
    assert 0 < r["top1"] < r["top5"] < 1  # a check on both sides of the boundary


def write_idx(path, array, code):
    with open(path, "wb") as f:
        f.write(struct.pack(">I", 0x800 | code) + b"".join(struct.pack(">I", d)
                                                          for d in array.shape))
        f.write(array.tobytes())


def digits_lmdb(folder, n, seed):
    """digits(n, seed) written as MNIST idx files and converted to an LMDB in `folder`; returns
    (the LMDB's path, pixels, labels)."""
    pixels, labels = digits(n, seed)
    write_idx(folder / "images.idx", pixels, 3)
    write_idx(folder / "labels.idx", labels, 1)
    db = folder / "lmdb"
    convert.mnist(folder / "images.idx", folder / "labels.idx", db, progress=False)
    return db, pixels, labels


def test_crossbow_eval_prints_what_evaluate_returns(tmp_path, capsys):
    db, pixels, labels = digits_lmdb(tmp_path, 40, 3)
    ckpt = tmp_path / "ckpt"
    x, y = (pixels[:, None] / 255.0).astype(np.float32), labels.astype(np.int32)
    crossbow.Trainer(net="lenet", train_db=(x, y), batch_size=8, learners=2, iterations=6,
                     lr=0.02, checkpoint_dir=str(ckpt), progress=False).fit()
    expected = trainer.evaluate("lenet", str(ckpt), str(db), batch_size=16, workers=1)
    assert cli.main(["eval", "--net", "lenet", "--checkpoint", str(ckpt), "--test-db", str(db),
                     "--batch-size", "16", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    m = re.search(r"test loss ([\d.]+), top-1 ([\d.]+)%, top-5 ([\d.]+)%", out)
    assert m, out
    assert float(m[1]) == pytest.approx(expected["loss"], abs=1e-4)
    assert float(m[2]) == pytest.approx(100 * expected["top1"], abs=0.01)
    assert float(m[3]) == pytest.approx(100 * expected["top5"], abs=0.01)
    assert 0 <= expected["top1"] <= expected["top5"] <= 1
