"""The GPU tools, on a machine without a GPU: crossbow spec, crossbow_bench on the CPU,
the bundle launcher, gpu_check.sh's checks before the GPU and its report, the PyTorch peer.
The time-to-accuracy comparison's are in test_gpu_tta.py."""
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

from crossbow import builder, cli, nets, reproduce, trainer
from conftest import ROOT, script

BUILD = os.path.join(ROOT, "build")
BENCH = os.path.join(BUILD, "crossbow_bench")
needs_bench = pytest.mark.skipif(not os.path.exists(BENCH), reason="build/crossbow_bench not built")
needs_cuda_tests = pytest.mark.skipif(
    not os.path.exists(os.path.join(BUILD, "crossbow_cuda_tests")),
    reason="build/crossbow_cuda_tests not built (configure with -DCROSSBOW_CUDA=ON)")
no_gpu = pytest.mark.skipif(shutil.which("nvidia-smi") is not None,
                            reason="checks the behaviour without a GPU")


def spec_file(tmp_path, net="lenet", *args):
    path = tmp_path / f"{net}.json"
    assert cli.main(["spec", "--net", net, "--output", str(path), *args]) == 0
    return path


def bench(*args, timeout=120):
    out = subprocess.run([BENCH, *map(str, args)], capture_output=True, text=True,
                         timeout=timeout)
    return out.returncode, json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_spec_command_names_the_device(tmp_path, capsys):
    spec = json.loads(spec_file(tmp_path, "resnet32", "--device", "cuda:0").read_text())
    assert spec["device"] == "cuda:0" and spec["name"] == "resnet32"
    assert spec["solver"]["weight_decay"] == 1e-4 and len(spec["params"]) > 60
    assert cli.main(["spec", "--net", "lenet"]) == 0
    assert json.loads(capsys.readouterr().out)["device"] == "cpu"
    assert cli.main(["spec", "--net", "lenet", "--device", "gpu0"]) == 1
    assert "device must be 'cpu', 'cuda' or 'cuda:N', got 'gpu0'" in capsys.readouterr().err


def test_cuda_local_is_the_ranks_gpu_on_its_machine(monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2")
    assert trainer.spec_device("cuda:local") == "cuda:2"
    monkeypatch.delenv("OMPI_COMM_WORLD_LOCAL_RANK")
    assert trainer.spec_device("cuda:local") == "cuda:0"


def test_devices_reach_the_spec():
    m = nets.builder("lenet")
    assert m.to_spec()["device"] == "cpu" and m.to_spec(device="cuda")["device"] == "cuda"
    with pytest.raises(ValueError, match="got 'cuda:'"):
        m.to_spec(device="cuda:")
    assert builder.check_device("cuda:12") == "cuda:12"
    assert trainer.spec_device("cuda:1,cuda:0") == "cuda:1"
    assert trainer.spec_device("cpu:0-1,cpu:2-3") == trainer.spec_device("cpu") == "cpu"
    assert nets.build("lenet", device="cuda:0").spec["device"] == "cuda:0"


@needs_bench
def test_bench_trains_lenet_on_the_cpu(tmp_path):
    rc, out, err = bench("--spec", spec_file(tmp_path, "lenet", "--lr", "0.01"), "--devices",
                         "cpu", "--batch_size", 16, "--learners", 2, "--seconds", 1,
                         "--warmup_iterations", 2)
    assert rc == 0, err
    assert out["learners_per_device"] == 2 and out["num_learners"] == 2
    assert out["images"] == 32 * out["iterations"] and out["iterations"] >= 1
    assert out["images_per_s"] > 0 and out["seconds"] >= 1
    assert out["learner_memory_bytes"] > 0 and out["gpu_memory"] == []
    assert (out["net"], out["spec_device"], out["sync"]) == ("lenet", "cpu", "sma")


@needs_bench
def test_bench_autotunes_on_the_cpu(tmp_path):
    rc, out, err = bench("--spec", spec_file(tmp_path, "lenet", "--lr", "0.01"), "--batch_size",
                         8, "--learners", "auto", "--max_learners", 2, "--autotune_window", 2,
                         "--autotune_warmup", 1, "--warmup_iterations", 1, "--seconds", 0.3)
    assert rc == 0, err
    tune = out["autotune"]
    assert tune["chosen"] == out["learners_per_device"] in (1, 2)
    assert tune["decisions"][0]["action"] == "start" and tune["images_trained"] > 0


@needs_bench
def test_bench_failures_are_one_json_line(tmp_path):
    spec = spec_file(tmp_path)
    rc, out, _ = bench("--spec", spec, "--learners", "two")
    assert rc == 1 and "(--learners) must be 'auto' or a number >= 1, got 'two'" in out["error"]
    rc, out, _ = bench("--spec", spec, "--sync-period", "0")
    assert rc == 1 and "sync_period (--sync-period) must be > 0, got 0" in out["error"]
    rc, out, _ = bench("--spec", tmp_path / "missing.json")
    assert rc == 1 and "cannot read the spec file" in out["error"]
    rc, out, _ = bench("--spec", spec, "--devices", "tpu:0")
    assert rc == 1 and "unknown device 'tpu:0'" in out["error"]


def gpu_check(tmp_path, *args, env=None):
    out = subprocess.run([script("gpu_check.sh"), "--out", str(tmp_path / "out"),
                          *args], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHON=sys.executable, **(env or {})))
    return out.returncode, out.stdout + out.stderr


@needs_cuda_tests
@no_gpu
def test_gpu_check_without_a_gpu_checks_the_build_and_exits_3(tmp_path):
    rc, text = gpu_check(tmp_path, "--build", BUILD, "--pack", str(tmp_path / "all.tar.gz"))
    assert rc == 3, text
    assert "no GPU present" in text and "the programs are complete and start" in text
    summary = json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    assert summary["exit_code"] == 3 and summary["crossbow"] == []
    assert json.loads((tmp_path / "out" / "resnet32.json").read_text())["device"] == "cuda:0"
    # everything, for a runner that hands back few files
    with tarfile.open(tmp_path / "all.tar.gz") as packed:
        assert {"out/gpu_check.json", "out/logs/test_list.txt"} <= set(packed.getnames())


@needs_cuda_tests
@no_gpu
def test_gpu_check_packs_everything_into_the_runners_out(tmp_path):
    """Under a runner that hands back $OUT ($OUT set, no --out or --pack) the results go to a
    folder beside $OUT and come back packed, so that no figure is measured without its output."""
    handback = tmp_path / "handback"
    handback.mkdir()
    out = subprocess.run([script("gpu_check.sh"), "--build", BUILD],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHON=sys.executable, OUT=str(handback),
                                  TMPDIR=str(tmp_path)))
    assert out.returncode == 3, out.stdout + out.stderr
    assert os.listdir(handback) == ["gpu_check.tar.gz"]
    with tarfile.open(handback / "gpu_check.tar.gz") as packed:
        names = set(packed.getnames())
    assert {"gpu_check/gpu_check.json", "gpu_check/steps.jsonl",
            "gpu_check/logs/test_list.txt"} <= names


def test_gpu_check_refuses_an_incomplete_bundle(tmp_path):
    (tmp_path / "bundle").mkdir()
    rc, text = gpu_check(tmp_path, "--bundle", str(tmp_path / "bundle"))
    assert rc == 2 and "has no run (make it with scripts/gpu/bundle_gpu.sh)" in text
    rc, text = gpu_check(tmp_path, "--bundle", "x", "--build", "y")
    assert rc == 2 and "usage:" in text


def fake_bundle(tmp_path):
    """A bundle whose one program needs libcbfake.so, which only CUDA_HOME/lib64 holds."""
    cc = shutil.which("cc") or pytest.skip("no C compiler")
    lib, bundle = tmp_path / "cuda" / "lib64", tmp_path / "bundle"
    for d in (lib, bundle / "bin", bundle / "lib" / "compat"):
        d.mkdir(parents=True)
    (tmp_path / "fake.c").write_text("int cb_fake(void) { return 42; }\n")
    (tmp_path / "main.c").write_text('#include <stdio.h>\nint cb_fake(void);\n'
                                     'int main(void) { printf("%d\\n", cb_fake()); return 0; }\n')
    subprocess.run([cc, "-shared", "-fPIC", "-o", lib / "libcbfake.so", tmp_path / "fake.c"],
                   check=True)
    subprocess.run([cc, "-o", bundle / "bin" / "prog", tmp_path / "main.c", "-L", lib,
                    "-lcbfake"], check=True)
    shutil.copy(script("bundle_run.sh"), bundle / "run")
    return bundle, tmp_path / "cuda"


def test_bundle_launcher_finds_cuda_libraries(tmp_path):
    bundle, cuda_home = fake_bundle(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "LD_LIBRARY_PATH")}
    run = lambda *args, **extra: subprocess.run([bundle / "run", *args], capture_output=True,
                                                text=True, env=dict(env, **extra))
    missing = run("--check")
    assert missing.returncode == 1 and "libraries not found: libcbfake.so" in missing.stderr
    found = run("--check", CUDA_HOME=str(cuda_home))
    assert found.returncode == 0 and str(cuda_home / "lib64") in found.stdout
    assert run("prog", CUDA_HOME=str(cuda_home)).stdout == "42\n"
    usage = run("nothing")
    assert usage.returncode == 2 and "programs: prog" in usage.stderr


def write_check_results(out, auto32=1500.0, parity_failures=(), torch512=2000.0):
    """A gpu_check.sh folder as a run on a GPU leaves it."""
    (out / "bench").mkdir(parents=True)
    steps = ["programs", "gpu", "parity", "gpu_test_DeviceCuda.RoundTrip", "torch"] + [
        f"bench_b32_l{k}_r{r}" for r in (1, 2, 3) for k in ("1", "8", "auto")]
    (out / "steps.jsonl").write_text("".join(
        json.dumps({"step": s, "status": "ok", "rc": 0, "seconds": 1}) + "\n" for s in steps))
    (out / "gpu.csv").write_text("NVIDIA H200, 580.65, 143771 MiB, 9.0\n")

    def gtest(name, tests, failed):
        cases = [{"name": t, "result": "COMPLETED",
                  **({"failures": [{"failure": "x"}]} if t in failed else {})} for t in tests]
        return {"tests": len(tests), "failures": len(failed),
                "testsuites": [{"name": name, "testsuite": cases}]}

    (out / "parity.json").write_text(json.dumps(gtest("OpParityCuda", ["Conv", "Relu"],
                                                      parity_failures)))
    (out / "gpu_tests").mkdir()
    (out / "gpu_tests" / "DeviceCuda.RoundTrip.json").write_text(
        json.dumps(gtest("DeviceCuda", ["RoundTrip"], ())))
    (out / "torch.json").write_text(json.dumps({"meta": {"torch": "2.9"}, "results": [
        {"batch_size": b, "images_per_s": r} for b, r in ((32, 400.0), (512, torch512))]}))
    for k, rate in (("1", 300.0), ("8", 1400.0), ("auto", auto32)):
        for r, scale in ((1, 1.2), (2, 0.5), (3, 1.0)):  # the median round is the third
            (out / "bench" / f"b32_l{k}_r{r}.json").write_text(json.dumps(
                {"images_per_s": rate * scale, "learners": k,
                 "learners_per_device": 6 if k == "auto" else int(k)}) + "\n")


def report(out):
    res = subprocess.run([sys.executable, script("gpu_check_report.py"), str(out)],
                         capture_output=True, text=True)
    return res.returncode, res.stdout, json.loads((out / "gpu_check.json").read_text())


def test_report_prints_the_table_and_the_targets(tmp_path):
    write_check_results(tmp_path)
    rc, text, summary = report(tmp_path)
    assert rc == 6, text  # everything measured, one target not met
    lines = text.splitlines()
    assert lines[-1].startswith("result: measured, a TARGET NOT MET (exit 6)")
    assert "parity: passed (ok, 2 tests, 0 failed, 0 skipped)" in lines
    assert any(line.split() == ["32", "|", "300", "|", "1400", "|", "1500", "(6)", "|", "400"]
               for line in lines), text
    targets = summary["targets"]
    assert targets["auto_b32_over_torch_b32"] == {"ratio": 3.75, "target": 3.0, "met": True,
                                                  "peer_mode": "eager"}
    assert targets["auto_b32_over_torch_b512"]["met"] is False
    assert "target auto_b32_over_torch_b512: 0.75x (>= 0.8x, against PyTorch eager): NOT met" \
        in lines


def test_report_shows_each_pytorch_mode_and_takes_the_best_for_the_targets(tmp_path):
    write_check_results(tmp_path)
    torch = json.loads((tmp_path / "torch.json").read_text())
    torch["results"] += [{"batch_size": 32, "mode": "graph", "images_per_s": 1000.0},
                         {"batch_size": 512, "mode": "graph", "images_per_s": 1900.0}]
    (tmp_path / "torch.json").write_text(json.dumps(torch))
    rc, text, summary = report(tmp_path)
    assert any(line.split() == ["batch", "|", "1", "|", "8", "|", "auto", "|", "PyTorch", "|",
                                "PyTorch", "graph"] for line in text.splitlines()), text
    assert any(line.split() == ["512", "|", "-", "|", "-", "|", "-", "|", "2000", "|", "1900"]
               for line in text.splitlines()), text
    b32, b512 = (summary["targets"][k] for k in ("auto_b32_over_torch_b32",
                                                 "auto_b32_over_torch_b512"))
    assert (b32["ratio"], b32["peer_mode"], b32["met"]) == (1.5, "graph", False)
    assert (b512["ratio"], b512["peer_mode"]) == (0.75, "eager")


def test_report_passes_when_every_target_is_met(tmp_path):
    write_check_results(tmp_path, torch512=1500.0)
    rc, text, summary = report(tmp_path)
    assert rc == 0 and text.splitlines()[-1].startswith("result: passed (exit 0)"), text
    assert all(t["met"] for t in summary["targets"].values())


def add_step(out, step, status):
    with open(out / "steps.jsonl", "a") as f:
        f.write(json.dumps({"step": step, "status": status, "rc": 0 if status == "ok" else 124,
                            "seconds": 120}) + "\n")


def test_report_fails_when_the_fp32_peer_did_not_complete_though_the_half_one_ran(tmp_path):
    write_check_results(tmp_path, torch512=1500.0)
    (tmp_path / "torch.json").unlink()
    steps = (tmp_path / "steps.jsonl").read_text().replace(
        '"step": "torch", "status": "ok"', '"step": "torch", "status": "timeout"')
    (tmp_path / "steps.jsonl").write_text(steps)
    add_step(tmp_path, "torch_half", "ok")
    (tmp_path / "torch_half.json").write_text(json.dumps({"results": [
        {"batch_size": b, "precision": "bf16", "images_per_s": 900.0} for b in (32, 512)]}))
    rc, text, summary = report(tmp_path)
    assert rc == 4, text
    assert "error: torch: timeout:" in text
    assert "target auto_b32_over_torch_b32: n/a" in text and "not measured" in text


def test_report_fails_when_the_half_precision_peer_did_not_complete(tmp_path):
    write_check_results(tmp_path, torch512=1500.0)
    add_step(tmp_path, "torch_half", "skipped")
    rc, text, _ = report(tmp_path)
    assert rc == 4 and "error: torch_half: skipped: the time budget was spent" in text, text


def test_report_fails_when_a_target_is_not_measured(tmp_path):
    write_check_results(tmp_path)
    torch = json.loads((tmp_path / "torch.json").read_text())
    torch["results"] = [r for r in torch["results"] if r["batch_size"] != 512]
    (tmp_path / "torch.json").write_text(json.dumps(torch))
    rc, text, summary = report(tmp_path)
    assert rc == 4, text
    assert summary["targets"]["auto_b32_over_torch_b512"]["met"] is None
    assert "target auto_b32_over_torch_b512: n/a (>= 0.8x, against PyTorch eager): not measured" \
        in text


def test_report_puts_each_precision_in_a_column_of_its_own(tmp_path):
    write_check_results(tmp_path, torch512=1500.0)
    for p, rate in (("bf16", 450.0), ("fp16", 470.0)):
        with open(tmp_path / "steps.jsonl", "a") as f:
            f.write(json.dumps({"step": f"bench_b32_l1_{p}", "status": "ok"}) + "\n")
        (tmp_path / "bench" / f"b32_l1_{p}.json").write_text(json.dumps(
            {"images_per_s": rate, "learners": "1", "learners_per_device": 1}) + "\n")
    add_step(tmp_path, "torch_half", "ok")
    (tmp_path / "torch_half.json").write_text(json.dumps({"results": [
        {"batch_size": 32, "precision": "bf16", "images_per_s": 900.0}]}))
    rc, text, summary = report(tmp_path)
    assert rc == 0, text
    lines = text.splitlines()
    assert any(line.split() == ["batch", "|", "1", "|", "8", "|", "auto", "|", "1_bf16", "|",
                                "1_fp16", "|", "PyTorch", "|", "PyTorch", "bf16"]
               for line in lines), text
    assert any(line.split() == ["32", "|", "300", "|", "1400", "|", "1500", "(6)", "|", "450",
                                "|", "470", "|", "400", "|", "900"] for line in lines), text
    # the targets stay against PyTorch's fp32
    assert summary["targets"]["auto_b32_over_torch_b32"]["ratio"] == 3.75


def test_report_fails_on_a_parity_failure_and_a_benchmark_error(tmp_path):
    write_check_results(tmp_path / "a", parity_failures=("Conv",))
    rc, text, summary = report(tmp_path / "a")
    assert rc == 1 and "failed: OpParityCuda.Conv" in text
    write_check_results(tmp_path / "b")
    (tmp_path / "b" / "bench" / "b32_l8_r2.json").write_text('{"error": "out of memory"}\n')
    rc, text, _ = report(tmp_path / "b")
    assert rc == 4 and "error: out of memory" in text
    write_check_results(tmp_path / "c")
    with open(tmp_path / "c" / "steps.jsonl", "a") as f:
        f.write(json.dumps({"step": "bench_b64_l1", "status": "skipped"}) + "\n")
    rc, text, summary = report(tmp_path / "c")
    assert rc == 4 and "error: skipped: the time budget was spent" in text
    assert summary["crossbow"][-1]["batch_size"] == 64


def test_report_counts_a_test_whose_process_died_as_failed_and_the_others_as_run(tmp_path):
    write_check_results(tmp_path)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "gpu_test_DeviceCuda.Copy.log").write_text("Segmentation fault\n")
    with open(tmp_path / "steps.jsonl", "a") as f:
        for name, status in (("DeviceCuda.Copy", "failed"), ("EngineCuda.Sma", "ok"),
                             ("EngineCuda.Late", "skipped")):
            f.write(json.dumps({"step": f"gpu_test_{name}", "status": status}) + "\n")
    (tmp_path / "gpu_tests" / "EngineCuda.Sma.json").write_text(json.dumps(
        {"tests": 1, "testsuites": [{"name": "EngineCuda", "testsuite": [{"name": "Sma"}]}]}))
    rc, text, summary = report(tmp_path)
    tests = summary["gpu_tests"]
    assert rc == 1 and not tests["passed"] and tests["tests"] == 2
    assert tests["failed"] == ["DeviceCuda.Copy"] and tests["not_run"] == ["EngineCuda.Late"]
    assert "Segmentation fault" in tests["logs"]["DeviceCuda.Copy"]
    assert ("gpu_tests: FAILED (failed, 2 tests, 1 failed, 0 skipped); failed: DeviceCuda.Copy; "
            "1 not run (the budget was spent)") in text


def test_report_takes_the_median_round_and_fails_a_parity_run_that_ran_nothing(tmp_path):
    write_check_results(tmp_path / "a")
    rc, text, summary = report(tmp_path / "a")
    auto = [r for r in summary["crossbow"] if r["learners"] == "auto"][0]
    assert auto["images_per_s"] == 1500.0 and auto["rounds"] == [1800.0, 750.0, 1500.0]
    write_check_results(tmp_path / "b")
    (tmp_path / "b" / "parity.json").write_text(json.dumps({"tests": 2, "testsuites": [
        {"name": "OpParityCuda", "testsuite": [{"name": n, "result": "SKIPPED"}
                                               for n in ("Conv", "Relu")]}]}))
    rc, text, summary = report(tmp_path / "b")
    assert rc == 1 and not summary["parity"]["passed"]
    assert "parity: FAILED (ok, 2 tests, 0 failed, 2 skipped); no case ran" in text


def torch_python():
    import peer  # the venv of scripts/peer/setup_peer.sh
    for python in ("/usr/bin/python3", sys.executable, peer.default_python()):
        if os.access(python, os.X_OK) and subprocess.run(
                [python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    pytest.skip("no Python with torch")


def test_torch_peer_runs_on_the_cpu_and_reports_a_missing_gpu(tmp_path):
    python, program = torch_python(), script("bench_torch_gpu.py")
    out = tmp_path / "torch.json"
    subprocess.run([python, program, "--device", "cpu", "--batches", "2", "--seconds", "0.1",
                    "--warmup", "1", "--output", out], check=True, capture_output=True,
                   timeout=300)
    (result,) = json.loads(out.read_text())["results"]
    assert result["batch_size"] == 2 and result["images_per_s"] > 0
    if shutil.which("nvidia-smi") is None:
        res = subprocess.run([python, program, "--batches", "2", "--output", out],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 1
        assert json.loads(out.read_text())["results"] == [
            {"bench": "torch", "batch_size": 2, "precision": "fp32", "mode": "eager",
             "error": "torch sees no CUDA device"}]


@pytest.mark.slow
@needs_cuda_tests
@no_gpu
def test_bundle_is_complete_small_and_checked_without_a_gpu(tmp_path):
    made = subprocess.run([script("bundle_gpu.sh"), "--build", BUILD, "--out",
                           tmp_path / "bundle"], capture_output=True, text=True, timeout=900)
    assert made.returncode == 0, made.stderr[-2000:]
    tarball = tmp_path / "bundle.tar.xz"
    assert os.path.getsize(tarball) < 60 * 2**20 and "bundle: " in made.stdout
    manifest = (tmp_path / "bundle" / "MANIFEST").read_text()
    assert "libcudnn.so.9" in manifest.splitlines()[3]  # needed from the GPU machine
    for f in ("bin/crossbow_bench", "bin/crossbow_cuda_tests", "bin/crossbow_train",
              "bin/crossbow_convert", "lib/libcrossbow.so", "lib/libcrossbow_data.so",
              "lib/libdnnl.so.2", "lib/libglog.so.1", "lib/liblmdb.so.0", "specs/resnet32.json",
              "runs/he-resnet32-sma-164ep/spec.json", "runs/vgg16-cifar-published-164ep/options.json"):
        assert f"./{f}" in manifest
    # OpenCV's image codecs would bring GDAL and ~140 other libraries: raw records need none.
    assert "imgcodecs" not in manifest and "gdal" not in manifest and "codecs" not in manifest
    rc, text = gpu_check(tmp_path, "--bundle", str(tarball))
    assert rc == 3 and "no GPU present" in text, text
    if not os.path.isfile(os.path.join(ROOT, "..", "shared", "data", "cifar10-jpg.tar.gz")):
        return
    # The reproduction's whole path on the CPU: the JPEGs decoded by Pillow, converted and
    # trained by the bundle's programs, which find no image codecs.
    packed = tmp_path / "reproduce.tar.gz"
    done = subprocess.run(
        [script("gpu_reproduce.sh"), "--bundle", str(tarball), "--runs",
         "he-resnet32-sma-164ep", "--flags", "--devices cpu --iterations 2 --eval_every 2 "
         "--learners 1", "--out", str(tmp_path / "reproduce"), "--pack", str(packed)],
        capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHON=sys.executable))
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "reproduce" / "he-resnet32-sma-164ep" / "result.json")
                        .read_text())
    assert result["iterations"] == 2 and 0 <= result["accuracy"] <= 1
    with tarfile.open(packed) as tar:
        assert "reproduce/he-resnet32-sma-164ep/metrics.jsonl" in tar.getnames()
    run = tmp_path / "reproduce" / "he-resnet32-sma-164ep"
    settings = json.loads((run / "reproduce.json").read_text())
    assert settings["train_images"] == 50000 and settings["machine"]["cpu"]
    row = reproduce.result_row(settings, str(run / "metrics.jsonl"))
    assert row["recipe"] == "he-resnet32" and row["final_top1"] == result["accuracy"]
