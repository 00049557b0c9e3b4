"""scripts/make_imagenet_like.py and `scripts/bench_data.py imagenet` at tiny sizes: ImageNet's
layout and size distribution, and a benchmark that runs end to end (without its peer here)."""
import json
import os
import subprocess
import sys

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "GLOG_minloglevel": "1"})


def test_imagenet_like_writes_imagenets_layout_and_sizes(tmp_path):
    out = run(os.path.join(SCRIPTS, "make_imagenet_like.py"), str(tmp_path), "--train", "60",
              "--val", "6", "--classes", "5", "--workers", "1")
    assert "wrote 66 JPEGs" in out.stdout
    classes = sorted(os.listdir(tmp_path / "train"))
    assert classes == [f"n{c:08d}" for c in range(5)]
    files = [f for c in classes for f in os.listdir(tmp_path / "train" / c)]
    assert len(files) == 60 and all(f.endswith(".JPEG") for f in files)
    lines = (tmp_path / "val.txt").read_text().splitlines()
    assert lines[0] == "ILSVRC2012_val_00000001.JPEG 0" and len(lines) == 6
    sizes = [Image.open(tmp_path / "train" / c / f).size for c in classes
             for f in os.listdir(tmp_path / "train" / c)]
    assert sum(max(s) == 500 for s in sizes) >= 20, "most longer sides are 500 px"
    assert sum(w > h for w, h in sizes) > sum(w < h for w, h in sizes), "landscape dominates"
    # Compressible as photographs are: well under the 3 bytes a pixel of white noise.
    size = sum(os.path.getsize(tmp_path / "train" / c / f) for c in classes
               for f in os.listdir(tmp_path / "train" / c))
    assert size / sum(w * h for w, h in sizes) < 1.2


def test_bench_data_imagenet_runs_and_says_why_it_skips_the_peer(tmp_path):
    out = run(os.path.join(SCRIPTS, "bench_data.py"), "imagenet", "--train", "24", "--images",
              "16", "--batch", "8", "--rounds", "1", "--scratch", str(tmp_path),
              "--peer-python", str(tmp_path / "no-python"))
    assert "peer skipped: no peer Python at" in out.stdout
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(result["images_per_s_per_core"]) == {"jpeg-full", "jpeg-reduced", "raw160-128",
                                                   "raw160-160", "raw160-192"}
    assert all(rate > 0 for rate in result["images_per_s_per_core"].values())
    assert result["first_batch"]["seconds"] > 0 and result["records"] == 24
    meta = json.loads((tmp_path / "raw160_24_1.0" / "crossbow_meta.json").read_text())
    assert meta["records"] == 24
    assert min(meta["height"]["min"], meta["width"]["min"]) == 160, "shorter sides at 160"
