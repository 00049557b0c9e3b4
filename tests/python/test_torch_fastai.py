"""scripts/peer/torch_fastai_imagenette.py, the PyTorch run of fastai's Imagenette recipe: its
Lookahead and schedule against their equations, and a tiny run that trains, checkpoints and
resumes, in the peer's venv (skipped where it is missing)."""
import json
import os
import subprocess

import pytest

from conftest import ROOT, script
from test_bench_nets import has_peer, peer

pytestmark = pytest.mark.skipif(not has_peer(), reason=(
    "no peer venv with torch and torchvision (scripts/peer/setup_peer.sh)"))

CHECKS = """
import math, torch
from torch_fastai_imagenette import Lookahead, flat_cosine
assert flat_cosine(0.008, 0.75, 0.5) == 0.008
assert abs(flat_cosine(0.008, 0.75, 0.875) - 0.004) < 1e-12
assert flat_cosine(0.008, 0.75, 1.0) == 0.0
# Plain SGD at lr 1 on the gradient 1 moves the fast weight by -1 a step; after k = 3 steps
# the slow weight moves alpha = 0.5 of the way (0 -> -1.5) and the fast one restarts there.
w = torch.zeros(1, requires_grad=True)
opt = Lookahead(torch.optim.SGD([w], lr=1.0), k=3, alpha=0.5)
seen = []
for _ in range(6):
    w.grad = torch.ones(1)
    opt.step()
    seen.append(float(w))
assert seen == [-1.0, -2.0, -1.5, -2.5, -3.5, -3.0], seen
"""


def test_lookahead_and_flat_cosine_follow_their_equations():
    r = subprocess.run([peer.default_python(), "-c", CHECKS], cwd=os.path.dirname(script("torch_fastai_imagenette.py")), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def _tiny_folder(tmp_path, per_class=8):
    """train/ and val/ of `per_class` CIFAR sample images a class (one batch of 64 a pass)."""
    sample = os.path.join(ROOT, "data", "samples", "cifar10")
    for split, source in (("train", "train"), ("val", "test")):
        for label in sorted(os.listdir(os.path.join(sample, source))):
            folder = tmp_path / "images" / split / label
            folder.mkdir(parents=True)
            for name in sorted(os.listdir(os.path.join(sample, source, label)))[:per_class]:
                os.symlink(os.path.join(sample, source, label, name), folder / name)
    return tmp_path / "images"


def _run(tmp_path, images, epochs):
    r = subprocess.run(
        [peer.default_python(), script("torch_fastai_imagenette.py"),
         "--images", str(images), "--epochs", str(epochs), "--net", "resnet18d",
         "--threads", "1", "--workers", "0", "--checkpoint", str(tmp_path / "ckpt.pt")],
        capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_a_tiny_run_trains_checkpoints_and_resumes(tmp_path):
    images = _tiny_folder(tmp_path)
    first = _run(tmp_path, images, 1)
    about = next(x for x in first if "recipe" in x)
    assert about["batch"] == 64 and about["options"]["optimizer"] == "radam"
    assert about["options"]["lr"] == 8e-3 and about["net"] == "resnet18d"
    [epoch] = [x for x in first if "accuracy" in x]
    assert epoch["epoch"] == 1 and 0 <= epoch["accuracy"] <= 1 and epoch["loss"] > 0
    second = _run(tmp_path, images, 2)
    evaluations = [x for x in second if "accuracy" in x]
    assert [x["epoch"] for x in evaluations] == [1, 2]
    assert evaluations[0] == epoch  # the stored epoch, not trained again
