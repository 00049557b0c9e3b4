"""The nets the CPU benchmarks compare (scripts/bench/bench_nets.py, torch_zoo.py, bench_step.py's
--net, --input-size, --classes): which nets have a twin, what a run names, how its rounds scale
with the net's cost, and that each side runs the net asked for, at tiny sizes (nothing timed
that matters). The twins themselves are checked in the peer's venv where it exists."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, script

import bench_nets  # noqa: E402
import peer  # noqa: E402
import torch_zoo  # noqa: E402

spec = importlib.util.spec_from_file_location("bench_step", script("bench_step.py"))
bench_step = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_step)

pytest.importorskip("crossbow._C")
from crossbow import nets  # noqa: E402

STEP = [sys.executable, script("bench_step.py")]


def has_peer():
    python = peer.default_python()
    return os.access(python, os.X_OK) and subprocess.run(
        [python, "-c", "import torch, torchvision"], capture_output=True).returncode == 0


def test_every_zoo_net_has_a_twin():
    assert set(torch_zoo.TWINS) == set(nets.NAMES)


@pytest.mark.parametrize("size", [None, 96])
def test_the_peers_input_shape_is_crossbows(size):
    """torch_zoo.shape, the peer's own account of each net's input, against the zoo's."""
    for net in torch_zoo.TWINS:
        given = size if net in nets.IMAGENET else None
        assert torch_zoo.shape(net, given) == bench_nets.resolve(net, 10, given)["shape"], net


def test_resolve_gives_the_shape_parameters_and_cost_of_the_size_asked_for():
    r18 = bench_nets.resolve("resnet18", 10, 128)
    assert r18["shape"] == [3, 128, 128] and r18["params"] == 11_181_642
    assert bench_nets.resolve("resnet18", 10, None)["shape"] == [3, 224, 224]
    assert bench_nets.resolve("resnet32", 100, None)["shape"] == [3, 32, 32]
    # torchvision's published figures: 1.82 G multiply-adds for ResNet-18, 4.11 G for ResNet-50
    assert bench_nets.resolve("resnet18", 1000, 224)["multiply_adds"] == pytest.approx(1.82e9,
                                                                                       rel=0.01)
    assert bench_nets.resolve("resnet50", 1000, 224)["multiply_adds"] == pytest.approx(4.11e9,
                                                                                       rel=0.01)


def test_rounds_scale_with_the_net_and_keep_resnet32s():
    ref = bench_nets.resolve("resnet32", 10, None)["multiply_adds"]
    assert {b: bench_step.iterations(b, ref, ref) for b in bench_step.ITERS} == bench_step.ITERS
    r50 = bench_nets.resolve("resnet50", 10, 224)["multiply_adds"]
    assert [bench_step.iterations(b, r50, ref) for b in (1, 16, 64)] == [1, 1, 1]
    r18 = bench_nets.resolve("resnet18", 10, 128)["multiply_adds"]
    assert bench_step.iterations(1, r18, ref) == round(40 * ref / r18) == 5
    assert bench_step.warmups(1) == 2 and bench_step.warmups(8) == 3


def test_a_side_that_ran_another_net_stops_the_run():
    r18 = bench_nets.resolve("resnet18", 10, 32)
    bench_nets.check_params(r18, 11_181_642, "torch")
    with pytest.raises(RuntimeError, match="the torch side ran a net of 464,154 parameters where "
                                           "Crossbow's resnet18 has 11,181,642"):
        bench_nets.check_params(r18, 464_154, "torch")
    with pytest.raises(RuntimeError, match=r"the crossbow side ran resnet18 on inputs of "
                                           r"\[3, 224, 224\], not \[3, 32, 32\]"):
        bench_nets.check_params(r18, 11_181_642, "crossbow", (3, 224, 224))
    bench_nets.check_params(r18, 11_181_642, "crossbow", (3, 32, 32))


def test_summary_names_net_size_and_classes():
    net = bench_nets.resolve("resnet50", 7, 128)
    line = bench_step.summary(net, 16, 1, "fp32", [0.5], {"eager": [1.0]}, (1, 2))
    assert (line["net"], line["input_size"], line["classes"]) == ("resnet50", 128, 7)
    assert line["ratio_vs_best"] == pytest.approx(2.0)


@pytest.mark.parametrize("flags, says", [
    (["--net", "resnet99"], "net 'resnet99' has no PyTorch twin to compare with; nets with one: "
                            "resnet20, resnet32"),
    (["--net", "nets.py:mine"], "net 'nets.py:mine' has no PyTorch twin"),
    (["--net", "resnet32", "--input-size", "64"], "resnet32 has a fixed input size"),
    (["--iters", "0"], "--iters must be at least 1, got 0")])
def test_a_net_it_cannot_compare_is_refused_before_any_work(tmp_path, flags, says):
    run = subprocess.run(STEP + flags + ["--peer-python", str(tmp_path / "nowhere")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert says in run.stderr and "Traceback" not in run.stderr, run.stderr


def crossbow_worker(net, size):
    flags = ["--input-size", str(size)] if size else []
    run = subprocess.run(STEP + ["--worker", "crossbow", "--net", net, "--batches", "2",
                                 "--iters", "1"] + flags,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_crossbow_worker_runs_the_net_and_size_asked_for():
    runs = [crossbow_worker("resnet18", size) for size in (32, 64, 128)]
    assert [r["params"] for r in runs] == [11_181_642] * 3 and len(runs[0]["times"]) == 1
    assert [r["input"] for r in runs] == [[3, s, s] for s in (32, 64, 128)]
    # Planned bytes: the parameters' buffers, the same at every size, plus activations, which
    # grow with the pixels, 4x from one size to the next (4.7 as the planner shares buffers;
    # the same at every size where the size were ignored).
    planned = [r["planned_bytes"] for r in runs]
    assert 3 < (planned[2] - planned[1]) / (planned[1] - planned[0]) < 6
    assert crossbow_worker("resnet20", None)["params"] == 269_722


def test_each_twin_has_crossbows_parameter_count():
    if not has_peer():
        pytest.skip(f"no peer venv with torch and torchvision at {peer.default_python()} "
                    "(scripts/peer/setup_peer.sh)")
    counts = {n: nets.builder(n, 10).num_params() for n in torch_zoo.TWINS}
    check = ("import json, sys, torch_zoo\n"
             "print(json.dumps({n: torch_zoo.param_count(torch_zoo.twin(n, 10)) "
             "for n in torch_zoo.TWINS}))")
    run = subprocess.run([peer.default_python(), "-c", check], env=peer.env(),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == counts


def test_a_tiny_run_against_the_peer_names_net_and_size():
    if not has_peer():
        pytest.skip(f"no peer venv with torch and torchvision at {peer.default_python()} "
                    "(scripts/peer/setup_peer.sh)")
    run = subprocess.run(STEP + ["--net", "resnet18", "--input-size", "32", "--classes", "5",
                                 "--batches", "2", "--rounds", "1", "--iters", "1",
                                 "--modes", "eager"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "\nresnet18 at 32x32, 5 classes, forward+backward+update" in run.stdout
    line = json.loads(run.stdout.strip().splitlines()[-1])
    assert (line["net"], line["input_size"], line["classes"], line["batch"]) == (
        "resnet18", 32, 5, 2)
    assert line["best_mode"] == "eager" and line["ratio_vs_best"] > 0


TRAIN = [sys.executable, script("bench_train.py")]


@pytest.mark.parametrize("flags, says", [
    (["hardware", "--net", "resnet99"], "net 'resnet99' has no PyTorch twin"),
    (["hardware", "--net", "lenet"], "bench_train hardware runs the nets of preset cifar (on "
                                     "CIFAR-10) and imagenet (on Imagenette); lenet's preset is "
                                     "mnist"),
    (["hardware", "--net", "resnet18", "--input-size", "32"],
     "input_size (--input-size) must be in [64, 224], got 32"),
    (["compare", "--net", "resnet50"], "--net, --input-size and --images are for hardware"),
    (["hardware", "--seconds", "inf"],
     "argument --seconds: must be a finite number of seconds > 0, got inf")])
def test_train_refuses_a_net_it_cannot_run_before_any_work(tmp_path, flags, says):
    run = subprocess.run(TRAIN + flags + ["--work", str(tmp_path / "work"), "--peer-python",
                                          str(tmp_path / "nowhere")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert says in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (tmp_path / "work").exists()


@pytest.mark.parametrize("net, size, params, db", [
    ("resnet18", 64, 11_181_642, "cifar10_encoded_train_lmdb"),
    ("resnet32", None, 464_154, "cifar10_train_lmdb")])
def test_train_hardware_runs_the_net_asked_for_on_a_jpeg_folder(tmp_path, net, size, params, db):
    """On the bundled CIFAR sample's JPEGs, one learner and the peer at batch 2, 5 s each:
    ResNet-18 at 64 px with the imagenet preset (an encoded LMDB, the peer decoding the JPEGs),
    ResNet-32 as the CIFAR runs (raw pixels). Each side ran the net and size asked for (their
    parameter counts and input shapes checked), and the JSON lines name them."""
    if not has_peer():
        pytest.skip(f"no peer venv with torch and torchvision at {peer.default_python()} "
                    "(scripts/peer/setup_peer.sh)")
    flags = ["--input-size", str(size)] if size else []
    run = subprocess.run(TRAIN + ["hardware", "--net", net, *flags,
                                  "--images", os.path.join(ROOT, "data", "samples", "cifar10"),
                                  "--work", str(tmp_path), "--seconds", "5", "--rounds", "1",
                                  "--peer-batches", "2", "--modes", "eager", "--workers", "1",
                                  "--threads", "1", "--learners", "1"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
    assert {"peer": "hardware", "batch": 2, "peer_mode": "eager", "params": params}.items() \
        <= next(x for x in lines if "params" in x).items()
    side = size or 32
    assert next(x for x in lines if "round" in x)["input"] == [3, side, side]
    final = [x for x in lines if x.get("bench") == "train_hardware"]
    assert [x["rate"] for x in final] == ["steady", "overall"]
    assert {(x["net"], x["input_size"], x["classes"]) for x in final} == {(net, side, 10)}
    assert final[1]["crossbow"] > 0 and final[1]["ratio_vs_b2_eager"] > 0
    assert (tmp_path / db / "data.mdb").is_file()
    assert f"\n{net} at {side} px, " in run.stdout



def test_train_hardware_searches_once_and_measures_its_choice(tmp_path):
    """--learners auto: the autotuner searches in a run of its own (its decisions printed,
    ending in a choice), and the round trains that many learners for all of --seconds."""
    if not has_peer():
        pytest.skip(f"no peer venv with torch and torchvision at {peer.default_python()} "
                    "(scripts/peer/setup_peer.sh)")
    run = subprocess.run(TRAIN + ["hardware", "--images",
                                  os.path.join(ROOT, "data", "samples", "cifar10"),
                                  "--work", str(tmp_path), "--seconds", "6", "--rounds", "1",
                                  "--peer-batches", "2", "--modes", "eager", "--workers", "1",
                                  "--threads", "1"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
    search = next(x for x in lines if "search" in x)
    assert [d["learners_per_device"] for d in search["search"][:2]] == [1, 2]
    assert search["search"][-1]["action"].startswith(("stop", "step back"))
    measured = next(x for x in lines if "round" in x)
    assert measured["learners"] == search["learners"] >= 1
    records = [json.loads(x) for x in open(tmp_path / "hw0.jsonl")]
    assert {r["learners_per_device"] for r in records} == {search["learners"]}
    assert records[0]["iteration"] == 10  # the round's first record: no search in the round
