"""scripts/bench/bench_averaging.py, the study of why averaged learners need more epochs: one schedule
for every run, one lever changed per run, every run's options valid for the trainer, and the
table read from metrics files."""
import json

import pytest

import bench_averaging

_C = pytest.importorskip("crossbow._C", reason="crossbow._C is not built (scripts/setup.sh)")


# The runs at four learners and alpha 1/N each change one option of another lever's run.
_BASES = {"sma-k4": "sma-k2", "sma-k4-lr-sqrtk": "sma-k4",
          "sma-k4-lr-sqrtk-alpha-1n": "sma-k4-lr-sqrtk",
          "sma-k2-lr-sqrtk-alpha-1n": "sma-k2-lr-sqrtk", "ssgd-k4-lr-sqrtk": "ssgd-k2-lr-k"}


def test_each_lever_changes_one_option_of_its_base_run():
    for name in bench_averaging.STUDY:
        o = bench_averaging.options(name, 10)
        assert o["steps"] == [5, 7.5] and o["warmup"] == 1.0 and o["lr_learner_scaling"] == "none"
        if name in ("sgd-k1", "sma-k2", "ssgd-k2"):
            continue
        b = bench_averaging.options(_BASES.get(name, f"{o['sync']}-k2"), 10)
        changed = {k for k in {*o, *b} if o.get(k) != b.get(k)}
        assert len(changed) == 1, (name, changed)


def test_every_run_passes_the_option_table():
    from crossbow.trainer import checked_options
    for name in bench_averaging.STUDY:
        checked_options(bench_averaging.options(name, 10))
    with pytest.raises(ValueError, match="alpha"):
        checked_options({**bench_averaging.options("sma-k2", 10), "alpha": -1})


def test_the_table_counts_epochs_to_each_target(tmp_path, capsys):
    (tmp_path / "cifar10-jpg" / "train" / "a").mkdir(parents=True)
    for i in range(4):
        (tmp_path / "cifar10-jpg" / "train" / "a" / f"{i}.jpg").write_bytes(b"")
    with open(tmp_path / "avg_sma-k2.jsonl", "w") as f:
        for epoch, accuracy in ((1, 0.5), (2, 0.76), (3, 0.81), (4, 0.79)):
            f.write(json.dumps({"epoch": epoch, "time": 10.0 * epoch, "accuracy": accuracy,
                                "iteration": epoch, "loss": 1.0}) + "\n")
    args = type("Args", (), dict(work=str(tmp_path), epochs=4, targets=[0.75, 0.8, 0.9],
                                 precision="bf16", seed=1))
    bench_averaging.report(args, str(tmp_path / "cifar10-jpg"))
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| sma-k2")]
    assert row == ["| sma-k2 | sync sma, learners 2 | 2.0 | 3.0 | not reached | 81.00% | 79.00% |"]
