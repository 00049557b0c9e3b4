"""Trainer options and `crossbow train` in short real runs (the real extension, lenet on
arrays or a converted LMDB), each showing its effect: warm-up ramps the learning rate, a time
limit stops, alpha sets how far learners drift from z, threads_per_learner adds threads, a
resume may change the learner count, and the command line writes its metrics and final
lines."""
import json
import os

import numpy as np
import pytest

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")

import crossbow  # noqa: E402
from crossbow import cli  # noqa: E402
from crossbow.plot import read_metrics  # noqa: E402
from test_scoring import digits, digits_lmdb  # noqa: E402


def arrays(n=256, seed=0):
    pixels, labels = digits(n, seed)
    return (pixels[:, None] / 255.0).astype(np.float32), labels.astype(np.int32)


def run(tmp_path, name="m", **options):
    metrics = tmp_path / f"{name}.jsonl"
    defaults = dict(net="lenet", train_db=arrays(), batch_size=16, learners=1, lr=0.01,
                    log_every=2, progress=False, metrics=str(metrics))
    result = crossbow.Trainer(**{**defaults, **options}).fit()
    return result, read_metrics(str(metrics))


def test_warmup_ramps_the_learning_rate_then_holds_it(tmp_path):
    _, records = run(tmp_path, warmup=1.0, warmup_start=0.1, epochs=2)  # 16 iterations/epoch
    lrs = [r["lr"] for r in records]
    assert lrs[0] < 0.3 * 0.01 and all(a <= b + 1e-12 for a, b in zip(lrs, lrs[1:]))
    assert lrs[-1] == pytest.approx(0.01)
    flat, _ = run(tmp_path, "flat", epochs=1)
    assert flat["stop_reason"] == "epochs"


def test_learner_scaling_multiplies_the_rate_by_the_learner_count(tmp_path):
    rates = {}
    for scaling, learners, sync in (("none", 2, "sma"), ("sqrt", 2, "sma"), ("linear", 3, "sma"),
                                    ("sqrt", 1, "sma"), ("auto", 2, "sma"), ("auto", 2, "ssgd")):
        _, records = run(tmp_path, f"{scaling}{learners}{sync}", learners=learners, sync=sync,
                         iterations=8, lr_learner_scaling=scaling)
        rates[scaling, learners, sync] = sorted({r["lr"] for r in records})
    assert rates["none", 2, "sma"] == rates["sqrt", 1, "sma"] == [pytest.approx(0.01)]
    assert rates["sqrt", 2, "sma"] == rates["auto", 2, "sma"] == [pytest.approx(0.01 * 2 ** 0.5)]
    assert rates["linear", 3, "sma"] == [pytest.approx(0.03)]
    assert rates["auto", 2, "ssgd"] == [pytest.approx(0.01)]  # its rate is the whole batch's
    with pytest.raises(ValueError, match="lr_learner_scaling"):
        run(tmp_path, "bad", lr_learner_scaling="square")


def test_time_limit_stops_training(tmp_path):
    result, _ = run(tmp_path, time_limit=1.0)
    assert result["stop_reason"] == "time_limit"
    assert 1.0 <= result["elapsed_s"] < 10 and result["iterations"] > 0


def test_alpha_sets_how_far_learners_drift_from_the_average(tmp_path):
    drift = {}
    for alpha in (0.02, 0.9):
        _, records = run(tmp_path, f"a{alpha}", learners=2, alpha=alpha, iterations=40, lr=0.02)
        drift[alpha] = np.mean([np.mean(r["distance_to_z"]) for r in records[5:]])
    assert drift[0.02] > 2 * drift[0.9] > 0


def test_resume_with_fewer_learners_and_with_auto(tmp_path, capfd):
    ckpt = str(tmp_path / "ckpt")
    first, _ = run(tmp_path, "a", learners=3, iterations=6, checkpoint_dir=ckpt)
    assert first["learners_per_device"] == 3
    fewer, _ = run(tmp_path, "b", learners=2, iterations=10, checkpoint_dir=ckpt, resume=True)
    assert fewer["resumed"] and fewer["learners_per_device"] == 2 and fewer["iterations"] == 10
    assert "the checkpoint had 3" in capfd.readouterr().err
    auto, _ = run(tmp_path, "c", learners="auto", iterations=14, checkpoint_dir=ckpt,
                  resume=True)
    assert auto["resumed"] and auto["iterations"] == 14
    assert auto["learners_per_device"] == 2  # a resume keeps the checkpoint's, not re-tuned


def test_crossbow_train_end_to_end(tmp_path, capsys):
    db, _, _ = digits_lmdb(tmp_path, 96, 4)
    metrics = tmp_path / "train.jsonl"
    assert cli.main(["train", "--net", "lenet", "--train-db", str(db), "--test-db", str(db),
                     "--batch-size", "8", "--learners", "2", "--epochs", "2", "--lr", "0.01",
                     "--log-every", "2", "--workers", "1", "--metrics", str(metrics),
                     "--no-progress"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("stopped (epochs) after 12 iterations, 2.00 epochs")
    assert "images/s with 2 learner(s) per device" in out[1]
    assert out[2].startswith("test accuracy ")
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert records[-1]["iteration"] == 12 and records[-1]["learners_per_device"] == 2
    tested = [r for r in records if "accuracy" in r]
    assert [r["epoch"] for r in tested] == [1.0, 2.0]
    assert float(out[2].split()[2].rstrip("%")) == pytest.approx(100 * tested[-1]["accuracy"],
                                                                abs=0.01)


def test_device_groups_each_train_their_own_learners(tmp_path):
    one, _ = run(tmp_path, "one", iterations=8)
    two, records = run(tmp_path, "two", devices="cpu:0,cpu:1", iterations=8)
    assert one["epochs"] == pytest.approx(8 * 16 / 256)
    assert two["epochs"] == pytest.approx(2 * 8 * 16 / 256)  # two devices, a batch each
    assert len(records[-1]["distance_to_z"]) == 2


_THREADS = """
import os, sys, threading, time
sys.path.insert(0, {python!r})
import numpy as np
import crossbow
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 1, 28, 28)).astype(np.float32)
y = (np.arange(256) % 10).astype(np.int32)
peak, done = [0], threading.Event()
def watch():
    while not done.is_set():
        peak[0] = max(peak[0], len(os.listdir("/proc/self/task")))
        time.sleep(0.005)
watcher = threading.Thread(target=watch)
watcher.start()
crossbow.Trainer(net="lenet", train_db=(x, y), batch_size=16, learners=1, iterations=40,
                 lr=0.01, threads_per_learner={threads}, progress=False).fit()
done.set()
watcher.join()
print(peak[0])
"""


def test_threads_per_learner_runs_the_learner_on_more_threads():
    import subprocess
    import sys
    from conftest import ROOT

    def peak(threads):  # the most threads the process had while it trained, in its own process
        code = _THREADS.format(python=os.path.join(ROOT, "python"), threads=threads)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        return int(r.stdout.split()[-1])

    assert peak(2) > peak(1)
