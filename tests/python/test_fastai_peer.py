"""scripts/peer/fastai_imagenette.py, fastai itself on the Imagenette recipes: a tiny run trains
with fastai's own Learner, writes a line per epoch, and goes on from its checkpoint after being
killed mid-run, in what scripts/docs/fastai_runs_table.py reads. The runs need the
peer venv with fastai (scripts/peer/setup_peer.sh) and skip without it."""
import json
import os
import signal
import subprocess

import pytest

from conftest import script
from test_bench_nets import peer
from test_torch_fastai import _tiny_folder

import fastai_runs_table


def has_fastai():
    python = peer.default_python()
    return os.access(python, os.X_OK) and subprocess.run(
        [python, "-c", "import fastai"], capture_output=True).returncode == 0


needs_fastai = pytest.mark.skipif(not has_fastai(), reason=(
    "no peer venv with fastai (scripts/peer/setup_peer.sh)"))


def _command(images, tmp_path):
    return [peer.default_python(), script("fastai_imagenette.py"), "--images", str(images),
            "--recipe", "tutorial", "--epochs", "2", "--threads", "1", "--workers", "0",
            "--checkpoint", str(tmp_path / "ckpt.pt"), "--output", str(tmp_path / "m.jsonl")]


@needs_fastai
def test_a_run_killed_after_its_first_epoch_goes_on_from_its_checkpoint(tmp_path):
    images = _tiny_folder(tmp_path)
    run = subprocess.Popen(_command(images, tmp_path), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, env=peer.env())
    lines = []
    try:
        for text in run.stdout:  # killed as soon as the first epoch's line is out
            lines.append(json.loads(text))
            if "epoch" in lines[-1]:
                run.send_signal(signal.SIGKILL)
                break
    finally:
        run.kill()
        run.wait(timeout=60)
    header, first = lines[0], lines[-1]
    assert header["recipe"] == "tutorial" and header["net"] == "xresnet34"
    assert header["fastai"] and "cores" in header["cpu"]
    assert first["epoch"] == 1 and 0 <= first["accuracy"] <= 1 and first["train_loss"] > 0
    assert first["time"] > 0 and first["images_per_s"] > 0
    again = subprocess.run(_command(images, tmp_path), capture_output=True, text=True,
                           timeout=600, env=peer.env())
    assert again.returncode == 0, again.stderr[-3000:]
    epochs = [json.loads(t) for t in again.stdout.splitlines() if '"epoch"' in t]
    assert [e["epoch"] for e in epochs] == [1, 2]
    assert epochs[0] == dict(first, resumed=True)  # read back, not trained again
    assert epochs[1]["time"] > first["time"]  # training time goes on from the checkpoint's
    # One batch an epoch: one-cycle's rate at 0 and at half the run, as fastai's schedule has
    # them (lr_max / 25; then past the quarter of warm-up, a third of the cosine from lr_max
    # down to lr_max / 1e5: 3/4 of the way back up from the end); a resume that restarted the
    # schedule would give epoch 2 the first rate again.
    end = 1e-3 / 1e5
    assert first["lr"] == pytest.approx(1e-3 / 25, rel=1e-9)
    # fastai takes the position through the run in float32: 2e-8 off in relative terms.
    assert epochs[1]["lr"] == pytest.approx(end + 0.75 * (1e-3 - end), rel=1e-6)
    header, kept = fastai_runs_table.read_run(tmp_path / "m.jsonl")
    assert [e["epoch"] for e in kept] == [1, 2] and header["epochs"] == 2
