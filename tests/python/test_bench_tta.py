"""bench_train.py statistical, the time-to-accuracy benchmark (scripts/bench/tta*.py): the rules that
turn curves into epochs, images/s and time to each target, on hand-made curves; the schedules
of the sweep; and the dry run end to end on the bundled sample (Crossbow alone, and the peer
where a peer Python with torch exists)."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, script

import peer  # noqa: E402
import tta  # noqa: E402
import tta_recipes  # noqa: E402
import tta_report  # noqa: E402

SAMPLE = os.path.join(ROOT, "data", "samples", "cifar10")


def curve(*points, train_images=1000):
    """Curve points from (epoch, seconds, accuracy), images = epoch x train_images."""
    return [{"epoch": e, "time": t, "accuracy": a, "images": round(e * train_images)}
            for e, t, a in points]


def run(name, side, points, learners=2, budget=30):
    return {"run": name, "side": side, "batch": 16, "learners": learners if side == "crossbow"
            else None, "epochs_budget": budget, "curve": curve(*points)}


def test_a_target_is_met_by_the_first_evaluation_at_or_above_it_even_if_accuracy_falls_back():
    c = curve((1, 10, 0.5), (2, 20, 0.8), (3, 30, 0.79), (4, 40, 0.86), (5, 50, 0.84))
    r = {"curve": c}
    assert tta_report.at_target(r, 0.8) == {"epochs": 2, "time": 20, "images_per_s": 100.0,
                                            "search_s": 0.0}
    assert tta_report.at_target(r, 0.85)["epochs"] == 4
    assert tta_report.at_target(r, 0.9) is None
    assert tta_report.best_accuracy(r) == 0.86


def test_images_per_s_runs_to_the_target_so_time_is_epochs_over_rate():
    # 2,000 images by 10 s, then slower: 4,000 more in 40 s, and slower still after the target.
    r = {"curve": [{"epoch": 1, "time": 10, "accuracy": 0.5, "images": 2000},
                   {"epoch": 3, "time": 50, "accuracy": 0.8, "images": 6000},
                   {"epoch": 4, "time": 100, "accuracy": 0.82, "images": 8000}]}
    found = tta_report.at_target(r, 0.8)
    assert found["images_per_s"] == pytest.approx(120)
    assert found["time"] == pytest.approx(found["epochs"] * 2000 / found["images_per_s"])


def test_verdict_takes_each_sides_soonest_run_and_splits_the_ratio_into_epochs_and_speed():
    """A recipe at two budgets is two runs: the shorter one, dropping its rate sooner, is
    the sooner to this target."""
    runs = [run("sma-b16", "crossbow", [(4, 40, 0.7), (8, 80, 0.81)]),
            run("sma-b16", "crossbow", [(4, 40, 0.7), (7, 70, 0.80)], budget=20),
            run("sgd-b16", "crossbow", [(6, 120, 0.80)], learners=1),      # fewer epochs, later
            run("he-b128/eager", "pytorch", [(5, 100, 0.79), (6, 120, 0.82)]),
            run("he-b128/compile", "pytorch", [(5, 70, 0.79), (6, 84, 0.80)]),
            run("goyal-b512/compile", "pytorch", [(4, 60, 0.80)])]
    v = tta_report.verdict(runs, 0.8)
    assert v["crossbow"]["run"] == "sma-b16, 20 ep"
    assert v["pytorch"]["run"] == "goyal-b512/compile, 30 ep"
    assert v["time_ratio"] == pytest.approx(70 / 60)
    assert v["epochs_ratio"] == pytest.approx(7 / 4)
    assert v["speed_ratio"] == pytest.approx((7000 / 70) / (4000 / 60))
    assert v["time_ratio"] == pytest.approx(v["epochs_ratio"] / v["speed_ratio"])
    assert v["slower_than"] == ["goyal-b512/compile, 30 ep"]  # 84 s and 120 s: after 70 s


def test_a_side_that_misses_the_target_says_its_best_and_how_far_short():
    runs = [run("sma-b16", "crossbow", [(10, 100, 0.83), (20, 200, 0.8412)]),
            run("he-b128/eager", "pytorch", [(10, 150, 0.86)])]
    v = tta_report.verdict(runs, 0.85)
    assert v["crossbow"] == {"reached": False, "best_accuracy": 0.8412,
                             "short_points": pytest.approx(0.88)}
    assert "time_ratio" not in v and v["pytorch"]["run"] == "he-b128/eager, 30 ep"
    text = tta_report.table(runs, [0.8, 0.85])
    assert "| crossbow | sma-b16, 30 ep | 16 x 2 learner(s) | 100 | 10.00 ep, 100 s | not " \
        "reached |" in text
    assert "| pytorch | he-b128/eager, 30 ep | 16, one process | 67 |" in text
    assert "not reached (best 84.12%, 0.88 short)" in text
    assert "| 80% | sma-b16, 30 ep: 10.00 ep, 100 s, 100 img/s | he-b128/eager, 30 ep: 10.00 " \
        "ep, 150 s, 67 img/s | 0.67 | 1.00 | 1.50 | none |" in text
    assert tta_report.verdict(runs[:1], 0.8)["pytorch"] is None  # a side not run at all


def test_the_learner_search_counts_in_crossbows_time_and_the_ratio():
    """30 s of search before a run that reaches 80% after 70 s of training: 100 s, against
    PyTorch's 80 s, and the table says how much of it the search took."""
    searched = dict(run("sma-b16", "crossbow", [(4, 40, 0.7), (7, 70, 0.80)]), search_s=30.0)
    runs = [searched, run("he-b128/eager", "pytorch", [(5, 80, 0.80)])]
    v = tta_report.verdict(runs, 0.8)
    assert v["crossbow"]["time"] == 100 and v["crossbow"]["search_s"] == 30
    assert v["time_ratio"] == pytest.approx(100 / 80)
    assert v["speed_ratio"] == pytest.approx((7000 / 70) / (5000 / 80))  # training alone
    assert v["slower_than"] == ["he-b128/eager, 30 ep"]
    text = tta_report.table(runs, [0.8])
    assert "| 7.00 ep, 100 s (30 s of it the learner search) |" in text
    assert "sma-b16, 30 ep: 7.00 ep, 100 s (30 s of it the learner search), 100 img/s" in text
    assert tta_report.at_target(dict(searched, search_s=None), 0.8)["time"] == 70


def test_crossbow_curve_keeps_the_evaluations_of_a_metrics_file():
    records = [{"epoch": 0.5, "time": 3.0, "loss": 2.0},
               {"epoch": 1.0, "time": 6.5, "accuracy": 0.31},
               {"epoch": 2.0, "time": 12.0, "accuracy": 0.42}]
    assert tta.crossbow_curve(records, 2000) == [
        {"epoch": 1.0, "time": 6.5, "accuracy": 0.31, "images": 2000},
        {"epoch": 2.0, "time": 12.0, "accuracy": 0.42, "images": 4000}]


def test_he_drops_cosine_goyal_warm_up_and_one_cycle_schedules():
    rs = tta_recipes.torch_recipes(30)
    he, cosine, goyal, cycle = (rs[n]["options"] for n in (
        "he-b128", "cos-b128", "goyal-b512", "onecycle-b512"))
    f = tta_recipes.lr_factor
    assert [f(he["schedule"], t) for t in (0, 14.99, 15, 22.49)] == pytest.approx(
        [1, 1, 0.1, 0.1])
    assert f(he["schedule"], 22.5) == pytest.approx(0.01)
    assert cosine["lr"] == 0.1
    assert [f(cosine["schedule"], t) for t in (0, 5, 15, 25, 30, 31)] == pytest.approx(
        [1, (1 + 3 ** 0.5 / 2) / 2, 0.5, (1 - 3 ** 0.5 / 2) / 2, 0, 0])
    assert goyal["lr"] == pytest.approx(0.4)
    # From He's 0.1 (a quarter of 0.4) to 0.4 over 5/90 of 30 epochs, then /10 at 10, 20, 26.67.
    assert f(goyal["schedule"], 0) == pytest.approx(0.25)
    assert f(goyal["schedule"], 5 / 6) == pytest.approx(0.625, abs=1e-3)
    assert [f(goyal["schedule"], t) for t in (1.7, 9.9, 10, 20, 26.7)] == pytest.approx(
        [1, 1, 0.1, 0.01, 0.001])
    assert cycle["nesterov"] and cycle["lr"] == 0.4
    assert [f(cycle["schedule"], t) for t in (0, 3, 6, 18, 30, 31)] == pytest.approx(
        [0, 0.5, 1, 0.5, 0, 0])
    # At He's batch Goyal's recipe is He's rate with Goyal's drops, and no warm-up.
    at_128 = rs["goyal-b128"]["options"]
    assert at_128["lr"] == pytest.approx(0.1) and "warmup" not in at_128["schedule"]
    assert [f(at_128["schedule"], t) for t in (0, 9.9, 10, 20, 26.7)] == pytest.approx(
        [1, 1, 0.1, 0.01, 0.001])
    assert "warm-up" not in rs["goyal-b128"]["about"]


def test_the_sweep_has_as_many_recipes_a_side_and_crossbows_follow_the_one_rule():
    sweep = tta_recipes.sweep(20)
    sides = [r["side"] for r in sweep.values()]
    assert sides.count("crossbow") == sides.count("pytorch") == 6
    sma16, sma32, sgd, cosine, he = (sweep[n]["options"] for n in (
        "sma-b16", "sma-b32", "sgd-b16", "sma-b16-cos", "sma-b16-he"))
    assert sma16["lr"] == pytest.approx(0.1 * (16 / 128) ** 0.5, abs=1e-4)
    assert sma32["lr"] == pytest.approx(0.05) and sgd["lr"] == sma16["lr"]
    assert (sma16["learners"], sgd["learners"], sgd["sync"]) == ("auto", 1, "sgd")
    assert sma16["central_momentum"] == 0.9 and "central_momentum" not in sgd
    assert "alpha" not in sma16  # left to the option table's default
    assert sma16["steps"] == [6.667, 13.333, 17.778] and sma16["warmup"] == 1.0
    assert "epochs" in sma16
    assert {k: v for k, v in cosine.items() if k not in ("lr_policy", "steps", "gamma")} == {
        k: v for k, v in sma16.items() if k not in ("lr_policy", "steps", "gamma")}
    assert cosine["lr_policy"] == "cosine" and "steps" not in cosine
    assert {k: v for k, v in he.items() if k != "steps"} == {
        k: v for k, v in sma16.items() if k != "steps"}
    assert he["steps"] == [10.0, 15.0]
    with pytest.raises(ValueError, match="unknown recipe 'sma-b61' .*sma-b16, sma-b16-cos"):
        tta_recipes.sweep(20, ["sma-b61"])


def test_every_crossbow_recipe_passes_the_option_table():
    pytest.importorskip("crossbow._C")
    from crossbow import trainer
    for name, recipe in tta_recipes.crossbow_recipes(30).items():
        trainer.checked_options(recipe["options"])


def bench_command(tmp_path, *args):
    return [sys.executable, script("bench_train.py"), "statistical", "--work",
            str(tmp_path), "--dry-run", *args]


def bench(tmp_path, *args):
    return subprocess.run(bench_command(tmp_path, *args), capture_output=True, text=True,
                          timeout=900)


def outputs(tmp_path):
    folder = tmp_path / "dry_run"
    runs = tta_report.read_runs(folder / "tta_runs.jsonl")
    return runs, (folder / "tta_table.md").read_text(), (folder / "tta_curves.png").read_bytes()


def test_dry_run_without_a_peer_runs_crossbow_alone_to_table_jsonl_and_plot(tmp_path):
    pytest.importorskip("crossbow._C")
    if not os.path.isdir(SAMPLE):
        pytest.skip(f"no bundled sample at {SAMPLE}")
    r = bench(tmp_path, "--recipes", "sgd-b16", "he-b128", "--epochs", "1", "--targets", "0.05",
              "--peer-python", str(tmp_path / "no-python"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "no PyTorch peer, so Crossbow alone: no peer Python at" in r.stdout
    runs, table, png = outputs(tmp_path)
    assert [(x["run"], x["side"], x["learners"]) for x in runs] == [("sgd-b16", "crossbow", 1)]
    point = runs[0]["curve"][-1]
    assert point["epoch"] == pytest.approx(1, abs=0.01) and point["images"] == \
        pytest.approx(2000, abs=20) and 0 < point["time"]
    assert "| crossbow | sgd-b16, 1 ep | 16 x 1 learner(s) |" in table and "| 5% |" in table
    assert png.startswith(b"\x89PNG")
    verdicts = [json.loads(line) for line in r.stdout.splitlines()
                if line.startswith('{"bench": "train_tta"')]
    assert [v["target"] for v in verdicts] == [0.05] and verdicts[0]["pytorch"] is None


def test_bad_targets_and_recipes_stop_before_any_work(tmp_path):
    r = bench(tmp_path, "--targets", "80")
    assert r.returncode == 1 and "--targets must lie in (0, 1), got [80.0]" in r.stderr
    r = bench(tmp_path, "--recipes", "sma-b61")
    assert r.returncode == 1 and "unknown recipe 'sma-b61' (--recipes)" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "dry_run").exists()


def test_a_budget_a_crossbow_recipe_cannot_run_stops_before_any_work(tmp_path):
    pytest.importorskip("crossbow._C")
    r = bench(tmp_path, "--recipes", "sma-b16-cos", "--epochs", "1", "2")
    assert r.returncode == 1, r.stderr
    assert ("bench_train: sma-b16-cos at --epochs 1: lr policy 'cosine' (--lr-policy) ends at 1 "
            "(--epochs), before its warm-up (--warmup 1) is over") in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "dry_run").exists()


def test_a_full_run_without_a_peer_stops_saying_how_to_get_one(tmp_path):
    r = subprocess.run([sys.executable, script("bench_train.py"), "statistical",
                        "--work", str(tmp_path / "w"), "--peer-python", str(tmp_path / "none")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "run scripts/peer/setup_peer.sh" in r.stderr
    assert "--recipes with Crossbow's recipes alone" in r.stderr
    assert not (tmp_path / "w").exists()


def peer_with_torch():
    """The peer venv's Python (scripts/peer/setup_peer.sh) and the bundled sample, or a skip."""
    python = peer.default_python()
    if not os.access(python, os.X_OK) or subprocess.run(
            [python, "-c", "import torch, torchvision"], capture_output=True).returncode:
        pytest.skip(f"no peer Python with torch at {python} (scripts/peer/setup_peer.sh)")
    if not os.path.isdir(SAMPLE):
        pytest.skip(f"no bundled sample at {SAMPLE}")
    return python


def timed_lines(command):
    """(stdout lines, stderr, exit status, the test's own clock when each line came)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines, clock = [], []
    for line in proc.stdout:
        lines.append(line)
        clock.append(time.monotonic())
    err = proc.communicate(timeout=900)[1]
    return lines, err, proc.returncode, clock


@pytest.mark.parametrize("loader", [(), ("--peer-workers", "0", "--peer-augment", "batch")],
                         ids=["default", "batch-in-process"])
def test_dry_run_of_the_peer_when_it_has_torch(tmp_path, loader):
    """One short peer run (batch 512: three steps an epoch on the sample) through the whole
    pipeline, with the peer's default loader (--workers 2, per image) and with whole batches
    augmented in the training process. Its training time is checked against this test's clock:
    at most the time between the peer's first line (its data loaded) and its evaluation's, and
    at least half of it (the rest builds the net and scores 500 test images, a ninth of the
    training's work)."""
    peer_with_torch()
    lines, err, status, clock = timed_lines(bench_command(
        tmp_path, "--recipes", "onecycle-b512", "--epochs", "1", "--threads", "2", *loader))
    assert status == 0, err[-3000:]
    runs, table, _ = outputs(tmp_path)
    assert [(x["run"], x["side"]) for x in runs] == [("onecycle-b512/eager", "pytorch")]
    assert (runs[0]["workers"], runs[0]["augment"]) == ((0, "batch") if loader else (2, "sample"))
    # drop_last: three batches of 512 from 2,000 images.
    point = runs[0]["curve"][0]
    assert runs[0]["curve"] == [pytest.approx(
        {"epoch": 1536 / 2000, "time": point["time"], "accuracy": point["accuracy"],
         "images": 1536})]
    started = next(c for line, c in zip(lines, clock) if '"threads"' in line)
    evaluated = next(c for line, c in zip(lines, clock) if '"accuracy"' in line)
    assert 0.5 * (evaluated - started) <= point["time"] <= evaluated - started
    assert "| pytorch | onecycle-b512/eager, 1 ep | 512, one process |" in table


def test_resume_keeps_finished_runs_adds_other_budgets_and_refuses_changed_ones(tmp_path):
    pytest.importorskip("crossbow._C")
    if not os.path.isdir(SAMPLE):
        pytest.skip(f"no bundled sample at {SAMPLE}")
    (tmp_path / "dry_run").mkdir()
    done = dict(run("sgd-b16", "crossbow", [(1, 9.5, 0.31)], learners=1), recipe="sgd-b16",
                epochs_budget=1, precision="fp32",
                options=tta_recipes.sweep(1, ["sgd-b16"])["sgd-b16"]["options"])
    tta_report.write_runs([done], tmp_path / "dry_run" / "tta_runs.jsonl")
    r = bench(tmp_path, "--recipes", "sgd-b16", "--epochs", "1", "--resume")
    assert r.returncode == 0, r.stderr[-3000:]
    assert '"tta_run"' not in r.stdout  # nothing trained: the table comes from the stored run
    assert "| crossbow | sgd-b16, 1 ep | 16 x 1 learner(s) | 105 | 1.00 ep, 10 s | 1.00 ep, " \
        "10 s |" in outputs(tmp_path)[1]
    r = bench(tmp_path, "--recipes", "sgd-b16", "--epochs", "2", "1", "--resume")
    assert r.returncode == 0, r.stderr[-3000:]
    assert [json.loads(line)["budget"] for line in r.stdout.splitlines()
            if line.startswith('{"tta_run"')] == [2]  # the new budget alone is trained
    assert [(x["run"], x["epochs_budget"]) for x in outputs(tmp_path)[0]] == \
        [("sgd-b16", 1), ("sgd-b16", 2)]
    for stored, complaint in ((dict(done, precision="bf16"), "in bf16, not fp32"),
                              (dict(done, options=dict(done["options"], lr=0.1)),  # a new rule
                               "trained with other options than the sweep's sgd-b16 now "
                               "(differing: lr)")):
        tta_report.write_runs([stored], tmp_path / "dry_run" / "tta_runs.jsonl")
        r = bench(tmp_path, "--recipes", "sgd-b16", "--epochs", "1", "--resume")
        assert r.returncode == 1 and f"holds sgd-b16, 1 ep {complaint}" in r.stderr, r.stderr


def test_auto_tuned_learners_are_searched_once_a_sweep_and_kept_for_every_budget(tmp_path):
    """sma-b16 at two budgets: one search before its first run, whose choice both runs train
    (and which --resume reuses: a third budget searches no more, nor does sma-b16-cos, whose
    options differ in the schedule alone); a sweep without --resume searches anew."""
    pytest.importorskip("crossbow._C")
    if not os.path.isdir(SAMPLE):
        pytest.skip(f"no bundled sample at {SAMPLE}")

    def searches(r):
        assert r.returncode == 0, r.stderr[-3000:]
        return [json.loads(line) for line in r.stdout.splitlines()
                if line.startswith('{"tta_search"')]

    r = bench(tmp_path, "--recipes", "sma-b16", "--epochs", "1", "2", "--targets", "0.99")
    found = searches(r)
    assert [s["tta_search"] for s in found] == ["sma-b16"] and found[0]["search"]
    stored = json.loads((tmp_path / "dry_run" / "tta_learners.json").read_text())
    assert stored == {"sma-b16": {k: found[0][k] for k in ("learners", "search", "search_s",
                                                             "options")}}
    assert found[0]["search_s"] > 0
    assert "lr_policy" not in found[0]["options"] and found[0]["options"]["batch_size"] == 16
    runs = outputs(tmp_path)[0]
    assert [(x["epochs_budget"], x["learners"], x["autotune"], x["search_s"]) for x in runs] == \
        [(b, found[0]["learners"], found[0]["search"], found[0]["search_s"]) for b in (1, 2)]
    assert all(x["options"]["learners"] == "auto" for x in runs)  # the recipe as the sweep has it
    stored["sma-b16"]["learners"] = 3  # as another search might have chosen
    (tmp_path / "dry_run" / "tta_learners.json").write_text(json.dumps(stored))
    r = bench(tmp_path, "--recipes", "sma-b16", "--epochs", "3", "--targets", "0.99", "--resume")
    assert searches(r) == [] and outputs(tmp_path)[0][-1]["learners"] == 3
    r = bench(tmp_path, "--recipes", "sma-b16-cos", "--epochs", "2", "--targets", "0.99",
              "--resume")
    assert [(s["tta_search"], s["twin"], s["learners"]) for s in searches(r)] == [
        ("sma-b16-cos", "sma-b16", 3)]
    assert outputs(tmp_path)[0][-1]["learners"] == 3
    r = bench(tmp_path, "--recipes", "sma-b16", "--epochs", "1", "--targets", "0.99")
    assert [s["tta_search"] for s in searches(r)] == ["sma-b16"]


def test_a_crossbow_run_stopped_by_a_signal_is_kept_for_resume_not_recorded(tmp_path):
    """SIGTERM after the first evaluation: the trainer stops cleanly, and the sweep stops with
    it, leaving the run out of tta_runs.jsonl (a truncated curve is no result) and its
    checkpoint in place; --resume then finishes it."""
    pytest.importorskip("crossbow._C")
    if not os.path.isdir(SAMPLE):
        pytest.skip(f"no bundled sample at {SAMPLE}")
    args = ["--recipes", "sgd-b16", "--epochs", "3", "--targets", "0.99"]
    proc = subprocess.Popen(bench_command(tmp_path, *args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    metrics = tmp_path / "dry_run" / "tta_sgd-b16_3ep.jsonl"
    deadline = time.monotonic() + 300
    while '"accuracy":' not in (metrics.read_text() if metrics.exists() else ""):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    assert "sgd-b16 stopped by a signal (SIGTERM), not recorded; its checkpoint" in err, err
    assert (tmp_path / "dry_run" / "tta_sgd-b16_3ep_ckpt").is_dir()
    assert not (tmp_path / "dry_run" / "tta_runs.jsonl").exists()
    r = bench(tmp_path, *args, "--resume")
    assert r.returncode == 0, r.stderr[-3000:]
    runs, _, _ = outputs(tmp_path)
    assert [x["run"] for x in runs] == ["sgd-b16"] and runs[0]["stop"] == "epochs"
    assert runs[0]["curve"][-1]["epoch"] == pytest.approx(3, abs=0.01)


def test_a_peer_killed_mid_run_stops_the_sweep_with_its_checkpoint_kept(tmp_path):
    """SIGTERM to the peer's process after its first evaluation: the sweep says which run
    stopped and where its checkpoint is, records nothing, and --resume finishes the run."""
    peer_with_torch()
    args = ["--recipes", "onecycle-b512", "--epochs", "3", "--threads", "2"]
    proc = subprocess.Popen(bench_command(tmp_path, *args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if '"accuracy"' in line:
            break
    children = [int(c) for t in os.listdir(f"/proc/{proc.pid}/task")
                for c in open(f"/proc/{proc.pid}/task/{t}/children").read().split()]
    assert children, "no peer process under bench_train"
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    checkpoint = tmp_path / "dry_run" / "tta_onecycle-b512_eager_3ep.pt"
    assert "onecycle-b512/eager, 3 ep stopped, not recorded (the peer" in err, err
    assert f"its checkpoint {checkpoint}, saved at each evaluation, is kept" in err, err
    assert "Traceback" not in err and checkpoint.exists()
    assert not (tmp_path / "dry_run" / "tta_runs.jsonl").exists()
    r = bench(tmp_path, *args, "--resume")
    assert r.returncode == 0, r.stderr[-3000:]
    runs, _, _ = outputs(tmp_path)
    assert [x["run"] for x in runs] == ["onecycle-b512/eager"]
    assert len(runs[0]["curve"]) == 3  # the resumed run's evaluations and the one before


def test_the_peers_interrupted_run_ends_where_an_uninterrupted_one_does(tmp_path):
    """Two epochs in one go against one epoch, a stop and a resume from the checkpoint (no
    loader workers, so every random draw is restored): the same evaluations and weights. A
    resume that lost the optimiser's momentum or a random stream leaves the weights apart by
    far more than the tolerance, which allows for reductions that differ in order."""
    python = peer_with_torch()
    options = tta_recipes.torch_recipes(2)["he-b128"]["options"]

    def train(epochs, checkpoint):
        spec = dict(folder=SAMPLE, work=str(tmp_path), batch=128, epochs=epochs, target=0.99,
                    threads=2, workers=0, augment="sample", peer_mode="eager",
                    precision="fp32", seed=0,
                    options=options, checkpoint=str(tmp_path / checkpoint))
        r = subprocess.run([python, script("torch_tta.py"), json.dumps(spec)],
                           capture_output=True, text=True, timeout=600, env=peer.env())
        assert r.returncode == 0, r.stderr[-3000:]
        return [json.loads(line) for line in r.stdout.splitlines() if '"accuracy"' in line]

    whole = train(2, "whole.pt")
    first = train(1, "parts.pt")
    resumed = train(2, "parts.pt")
    assert len(whole) == len(resumed) == 2 and resumed[0] == first[0]
    assert [(e["images"], e["accuracy"]) for e in resumed] == \
        [(e["images"], e["accuracy"]) for e in whole]
    compare = ("import sys, torch\n"
               "a, b = (torch.load(p, weights_only=False)['model'] for p in sys.argv[1:])\n"
               "print(max(float((a[k].float() - b[k].float()).abs().max()) for k in a))")
    r = subprocess.run([python, "-c", compare, str(tmp_path / "whole.pt"),
                        str(tmp_path / "parts.pt")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert float(r.stdout) <= 1e-5
