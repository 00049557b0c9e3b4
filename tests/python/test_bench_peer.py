"""The benchmarks' PyTorch peer (scripts/peer/peer.py): which Python it is, what it runs in, how it
describes itself and how Crossbow's ratios against its modes come out, with a fake peer whose
torch is a stub (no venv, no real torch, nothing timed)."""
import importlib.util
import os
import subprocess
import sys

import pytest

import conftest
from conftest import script

import bench_nets  # noqa: E402
import peer  # noqa: E402

spec = importlib.util.spec_from_file_location("bench_step", script("bench_step.py"))
bench_step = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_step)

FAKE_TORCH = '''__version__ = "9.1.0"
class __config__:
    @staticmethod
    def show():
        return "  - Intel(R) MKL-DNN v3.7.1 (Git Hash abc)\\n  - OpenMP 201511"
'''


def fake_peer(tmp_path, torch_source=FAKE_TORCH):
    """An executable 'python' whose torch is `torch_source`."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "torch.py").write_text(torch_source)
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={site}:$PYTHONPATH exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    return str(python)


def test_default_is_the_venv_and_a_missing_one_says_how_to_make_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CROSSBOW_PEER_VENV", str(tmp_path / "venv"))
    with pytest.raises(RuntimeError, match="run scripts/peer/setup_peer.sh"):
        peer.describe(peer.default_python())
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    fake_peer(tmp_path / "venv" / "bin")
    assert peer.default_python() == str(tmp_path / "venv" / "bin" / "python")
    out = subprocess.run([sys.executable, script("peer.py"), "--venv"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path / "venv")


def test_peer_environment_drops_openblas_presets_for_the_peer_alone(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OPENBLAS_L2_SIZE", "1048576")
    env = peer.env()
    assert "OPENBLAS_CORETYPE" not in env and "OPENBLAS_L2_SIZE" not in env
    assert env["PYTHONPATH"] == peer.PATH
    assert os.environ["OPENBLAS_CORETYPE"] == "Haswell"


def test_describe_names_path_torch_and_onednn_and_drops_compile_without_it(tmp_path):
    python = fake_peer(tmp_path)
    info = peer.describe(python)
    assert info == {"python": python, "torch": "9.1.0", "onednn": "3.7.1", "compile": False}
    assert peer.banner(info) == f"peer: {python}, torch 9.1.0, oneDNN 3.7.1"
    modes, notes = peer.modes(info)
    assert modes == ["eager", "channels_last"]
    assert notes == ["torch 9.1.0 has no torch.compile: mode compile skipped"]
    assert peer.modes(dict(info, compile=True)) == (list(peer.MODES), [])


def test_a_peer_without_torch_says_how_to_get_one(tmp_path):
    with pytest.raises(RuntimeError, match="setup_peer.sh"):
        peer.describe(fake_peer(tmp_path, 'raise ImportError("no torch here")'))


def test_step_summary_gives_ratios_against_each_mode_and_the_best():
    peer_s = {"eager": [0.2, 0.3, 0.25], "channels_last": [0.16, 0.15, 0.14],
              "compile": [0.12, 0.13, 0.2]}
    line = bench_step.summary(bench_nets.resolve("resnet32", 10, None), 16, 1, "bf16",
                              [0.1, 0.08, 0.12], peer_s, (10, 40))
    assert line["crossbow_ms_median"] == pytest.approx(100)
    assert line["pytorch_compile_ms_min"] == pytest.approx(120)
    assert line["ratio_vs_eager"] == pytest.approx(2.5)
    assert line["ratio_vs_channels_last"] == pytest.approx(1.5)
    assert line["best_mode"] == "compile"
    assert line["ratio_vs_best"] == pytest.approx(1.3)
    assert line["activation_bytes_unplanned"] == 40
    assert line["precision"] == "bf16"


TORCH_MODES_CHECK = """
import torch, torch_modes
from crossbow.torch_resnet import cifar_resnet
model, layout = torch_modes.prepare(cifar_resnet(20), "channels_last")
assert model.conv.weight.is_contiguous(memory_format=torch.channels_last)
assert layout(torch.zeros(2, 3, 32, 32)).is_contiguous(memory_format=torch.channels_last)
try:
    torch_modes.prepare(model, "fast")
except ValueError as e:
    assert "unknown peer mode 'fast'" in str(e), e
else:
    raise AssertionError("mode 'fast' accepted")
"""


def test_torch_modes_lay_out_model_and_input():
    """In a process of its own, as the peer runs it (torch initialises once per process)."""
    if subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode:
        pytest.skip("this Python has no torch")
    out = subprocess.run([sys.executable, "-c", TORCH_MODES_CHECK], env=peer.env(),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]


@pytest.mark.parametrize("script, flag", [("bench_step.py", "--precisions"),
                                          ("bench_train.py", "--precision")])
def test_a_bf16_benchmark_on_a_cpu_without_it_says_what_the_cpu_has(tmp_path, script, flag):
    """Under ONEDNN_MAX_CPU_ISA=AVX2 Crossbow has no bf16: both benchmarks stop before any work
    (no peer asked, no data made), naming the flag and what oneDNN finds."""
    pytest.importorskip("crossbow._C")
    args = [sys.executable, conftest.script(script)]
    args += ["hardware", "--work", str(tmp_path / "work")] if script == "bench_train.py" else []
    run = subprocess.run(args + [flag, "bf16", "--peer-python", str(tmp_path / "nowhere")],
                         env=dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2"), capture_output=True,
                         text=True, timeout=120)
    name = script[:-3]
    assert run.returncode == 1, run.stderr
    assert (f"{name}: {flag} bf16 needs a CPU with AVX512-BF16 or AMX; oneDNN finds avx2 here"
            in run.stderr), run.stderr
    assert "Traceback" not in run.stderr and not (tmp_path / "work").exists()
