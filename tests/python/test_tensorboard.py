"""TensorBoard: events written while training runs, read back with tensorboard's own
EventAccumulator; the same numbers as the metrics file."""
import json
import os
import time

import pytest

import crossbow
from crossbow import cli
from crossbow.plot import read_metrics
from crossbow.tensorboard_log import MetricsFollower, scalars
from test_trainer import _blobs, needs_native

pytest.importorskip("tensorboardX", reason="TensorBoard logging needs tensorboardX (setup.sh)")
event_accumulator = pytest.importorskip(
    "tensorboard.backend.event_processing.event_accumulator",
    reason="reading events back needs tensorboard (setup.sh)")


def _events(logdir):
    acc = event_accumulator.EventAccumulator(str(logdir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _line(i, **extra):
    r = {"iteration": i, "epoch": i / 10, "time": float(i), "loss": 1.0 / i, "lr": 0.1,
         "images_per_s": 50.0, "learners_per_device": 2, "distance_to_z": [0.5, 0.25]}
    r.update(extra)
    return json.dumps(r) + "\n"


def test_records_become_scalars_and_non_finite_values_are_left_out():
    tags = dict(scalars(json.loads(_line(3, loss=None, accuracy=0.5, top5=0.9,
                                         test_loss=1.5))))
    assert "train/loss" not in tags
    assert tags["test/top1"] == 0.5 and tags["test/top5"] == 0.9 and tags["test/loss"] == 1.5
    assert tags["sma/distance_to_z/learner_1"] == 0.25 and tags["train/learners_per_device"] == 2


def test_the_follower_writes_while_the_file_grows(tmp_path):
    metrics, logdir = tmp_path / "m.jsonl", tmp_path / "tb"
    follower = MetricsFollower(metrics, logdir, interval=0.05).start()
    try:
        with open(metrics, "w") as f:
            f.write(_line(1) + _line(2)[:20])  # a record and half of the next
            f.flush()
            deadline = time.time() + 20
            while "train/loss" not in _events(logdir) and time.time() < deadline:
                time.sleep(0.05)
            assert _events(logdir)["train/loss"] == [(1, 1.0)]  # before the run ends
            f.write(_line(2)[20:])
    finally:
        follower.stop()
    assert [s for s, _ in _events(logdir)["train/loss"]] == [1, 2]
    assert follower.records == 2


def test_a_truncated_file_is_read_from_its_start(tmp_path):
    metrics, logdir = tmp_path / "m.jsonl", tmp_path / "tb"
    metrics.write_text(_line(1) + _line(2) + _line(3))
    follower = MetricsFollower(metrics, logdir, offset=metrics.stat().st_size)
    assert follower.poll() == 0  # an earlier run's records are not this run's
    metrics.write_text(_line(1))
    assert follower.poll() == 1
    follower.stop()


def _same(events, expected):
    """The same steps, and values equal as float32 (the events' type)."""
    assert [s for s, _ in events] == [s for s, _ in expected]
    assert [v for _, v in events] == pytest.approx([v for _, v in expected], rel=1e-6)


@needs_native
def test_trainer_tensorboard_matches_the_metrics_file(tmp_path):
    logdir = tmp_path / "tb"
    crossbow.Trainer(net="lenet", train_db=_blobs(), test_db=_blobs(64, 1), batch_size=16,
                     learners=2, epochs=2, lr=0.02, log_every=4, tensorboard=str(logdir),
                     progress=False).fit()
    records = read_metrics(str(logdir / "metrics.jsonl"))  # where the metrics go by default
    events = _events(logdir)
    train = [(r["iteration"], r["loss"]) for r in records if r["loss"] is not None]
    _same(events["train/loss"], train)
    tests = [(r["iteration"], r["accuracy"]) for r in records if "accuracy" in r]
    assert len(tests) == 2
    _same(events["test/top1"], tests)
    _same(events["test/top5"], [(r["iteration"], r["top5"]) for r in records if "top5" in r])
    for tag in ("train/lr", "train/images_per_s", "train/learners_per_device",
                "sma/distance_to_z/learner_0", "sma/distance_to_z/learner_1"):
        assert len(events[tag]) == len(records), tag
    assert {v for _, v in events["train/learners_per_device"]} == {2.0}


def _mnist_lmdb(tmp_path):
    from crossbow import convert
    mnist = os.path.join(os.path.dirname(__file__), "..", "..", "data", "samples", "mnist")
    db = tmp_path / "mnist_lmdb"
    convert.mnist(os.path.join(mnist, "t10k-images-idx3-ubyte.gz"),
                  os.path.join(mnist, "t10k-labels-idx1-ubyte.gz"), db, progress=False)
    return db


def _train_args(tmp_path):
    return ["train", "--net", "lenet", "--train-db", str(_mnist_lmdb(tmp_path)),
            "--batch-size", "16", "--learners", "2", "--log-every", "5", "--lr", "0.01",
            "--no-progress", "--tensorboard", str(tmp_path / "tb"),
            "--checkpoint-dir", str(tmp_path / "ckpt")]


@needs_native
def test_crossbow_train_tensorboard_flag(tmp_path):
    """A short `crossbow train --tensorboard DIR` on an LMDB; a resumed run adds its own
    records only."""
    args, logdir = _train_args(tmp_path), tmp_path / "tb"
    assert cli.main(args + ["--iterations", "20"]) == 0
    assert [s for s, _ in _events(logdir)["train/loss"]] == [5, 10, 15, 20]
    assert cli.main(args + ["--iterations", "30", "--resume"]) == 0
    assert [s for s, _ in _events(logdir)["train/loss"]] == [5, 10, 15, 20, 25, 30]


@needs_native
def test_a_run_resumed_from_an_older_checkpoint_keeps_one_history(tmp_path):
    """A run that trained past its last checkpoint (killed before writing the next) is resumed
    from that checkpoint: the records and events of the iterations trained again appear once,
    those of the resumed run."""
    from crossbow.weights import CHECKPOINT_FILE
    args, logdir = _train_args(tmp_path), tmp_path / "tb"
    checkpoint = tmp_path / "ckpt" / CHECKPOINT_FILE
    assert cli.main(args + ["--iterations", "20"]) == 0
    at_20 = checkpoint.read_bytes()
    assert cli.main(args + ["--iterations", "30", "--resume"]) == 0
    lost = {r["iteration"]: r["loss"] for r in read_metrics(str(logdir / "metrics.jsonl"))}
    checkpoint.write_bytes(at_20)  # as if the run had died after iteration 30 unsaved
    assert cli.main(args + ["--iterations", "30", "--resume", "--lr", "0.05"]) == 0
    records = read_metrics(str(logdir / "metrics.jsonl"))
    assert [r["iteration"] for r in records] == [5, 10, 15, 20, 25, 30]
    assert records[-1]["loss"] != lost[30]  # the resumed run's record, at its own rate
    _same(_events(logdir)["train/loss"], [(r["iteration"], r["loss"]) for r in records])


def test_two_runs_in_one_second_keep_both_their_events(tmp_path):
    """tensorboardX names event files by the second; each run's file needs a name of its own."""
    logdir = tmp_path / "tb"
    for i in (1, 2):
        metrics = tmp_path / f"m{i}.jsonl"
        metrics.write_text(_line(i))
        follower = MetricsFollower(metrics, logdir)
        follower.stop()
    assert [s for s, _ in _events(logdir)["train/loss"]] == [1, 2]
    assert len(os.listdir(logdir)) == 2
