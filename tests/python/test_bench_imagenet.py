"""scripts/datagen/make_imagenet_like.py and `scripts/bench/bench_data.py imagenet` at tiny sizes: ImageNet's
layout and size distribution, and a benchmark that runs end to end (without its peer here)."""
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest
from PIL import Image

from conftest import script
from crossbow import convert


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "GLOG_minloglevel": "1"})


def test_imagenet_like_writes_imagenets_layout_and_sizes(tmp_path):
    out = run(script("make_imagenet_like.py"), str(tmp_path), "--train", "60",
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
    out = run(script("bench_data.py"), "imagenet", "--train", "24", "--images",
              "16", "--batch", "8", "--rounds", "1", "--scratch", str(tmp_path),
              "--peer-python", str(tmp_path / "no-python"))
    assert "peer skipped: no peer Python at" in out.stdout
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    result = lines[-1]
    assert set(result["images_per_s_per_core"]) == {
        "jpeg-full", "jpeg-reduced", "jpeg400-reduced", "raw160-128", "raw160-160", "raw160-192",
        "raw128-128"}
    assert all(rate > 0 for rate in result["images_per_s_per_core"].values())
    assert result["records"] == 24
    startups = [line for line in lines if line["bench"] == "data_imagenet_startup"]
    startup = startups[0]
    assert startup["first_batch"]["first_batch_s"] > 0 and startup["records"] == 24
    # The same records as other writers leave them (without the lmdb package: the converter's).
    writers = ["-python-lmdb", "-caffe"] if importlib.util.find_spec("lmdb") else []
    assert [s["db"] for s in startups] == [startup["db"] + w for w in [""] + writers]
    assert all(s["records"] == 24 and s["first_batch"]["first_batch_s"] > 0 for s in startups)
    meta = json.loads((tmp_path / "raw160_24_1.0" / "crossbow_meta.json").read_text())
    assert meta["records"] == 24
    assert min(meta["height"]["min"], meta["width"]["min"]) == 160, "shorter sides at 160"
    meta = json.loads((tmp_path / "jpeg400_24_1.0" / "crossbow_meta.json").read_text())
    assert max(meta["height"]["max"], meta["width"]["max"]) <= 400, "longer sides at most 400"


def test_raw_db_is_what_convert_with_resize_shorter_and_shuffle_leaves(tmp_path):
    db = tmp_path / "raw"
    out = run(script("make_imagenet_like.py"), "--raw-db", str(db), "--gib",
              "0.004", "--classes", "4", "--pool", "8", "--shorter", "40")
    records = list(convert.records(db))
    assert f"wrote {len(records)} records" in out.stdout and "GiB data.mdb" in out.stdout
    assert len(records) == math.ceil(0.004 * 2**30 / mean_pool_bytes(8, 40))
    keys = [key for key, _ in records]
    assert keys == sorted(keys) and keys[0].startswith("00000000_n0000000")
    labels = [d["label"] for _, d in records]
    assert sorted(labels) == sorted(i % 4 for i in range(len(labels))), "folder order's labels"
    runs = sum(a != b for a, b in zip(labels, labels[1:]))
    assert runs > len(labels) / 2, f"labels not shuffled across the DB ({runs} changes)"
    names = sorted(key.split("_", 1)[1] for key in keys)
    assert names == sorted(f"n{i % 4:08d}/n{i % 4:08d}_{i // 4}.JPEG" for i in range(len(keys)))
    for key, d in records:
        assert key.split("_", 1)[1].startswith(f"n{d['label']:08d}/")
        assert min(d["height"], d["width"]) == 40 and not d["encoded"]
        assert len(d["data"]) == 3 * d["height"] * d["width"]
    assert sum(d["width"] > d["height"] for _, d in records) > len(records) / 2
    assert (db / "labels.txt").read_text().split() == [f"n{c:08d}" for c in range(4)]
    check = convert.check(db, progress=False)
    assert check["agrees"], check["text"]


def mean_pool_bytes(count, shorter):
    import make_imagenet_like
    return sum(len(p[2]) for p in make_imagenet_like.raw_pool(count, shorter, 0)) / count


def test_make_imagenet_scale_times_each_step_once(tmp_path):
    args = [script("make_imagenet_scale.py"), str(tmp_path), "--records", "12", "--raw-gib", "0.002", "--classes", "3",
            "--pool", "4", "--workers", "1"]
    lines = [json.loads(line) for line in run(*args).stdout.splitlines()]
    assert [r["step"] for r in lines] == ["jpeg_12", "db_12", "raw_0.002"]
    assert all(r["seconds"] > 0 and r["records_per_s"] > 0 for r in lines)
    meta = json.loads((tmp_path / "db_12" / "crossbow_meta.json").read_text())
    assert (meta["records"], meta["encoded"], meta["labels"]) == (12, 12, [0, 2])
    raw = json.loads((tmp_path / "raw_0.002" / "crossbow_meta.json").read_text())
    assert lines[2]["records"] == raw["records"] >= 3 and raw["encoded"] == 0
    again = run(*args)
    assert again.stdout == "" and again.stderr.count("kept from an earlier run") == 3


def test_bench_imagenet_startup_and_cold_runs_on_given_dbs(tmp_path):
    db = tmp_path / "raw"
    run(script("make_imagenet_like.py"), "--raw-db", str(db), "--gib", "0.003",
        "--classes", "3", "--pool", "4", "--shorter", "40")
    records = len(list(convert.records(db)))
    # --warm: a test must not drop the page cache of a shared machine; the DB's own pages are
    # evicted instead, so that the first run reads them from disk through LMDB's map.
    with open(db / "data.mdb", "rb") as f:
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    out = run(script("bench_data.py"), "imagenet", "--startup-db", str(db),
              "--cold-db", str(db), "--cold-images", "40", "--batch", "8", "--warm")
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["bench"] for r in lines] == ["data_imagenet_startup"] + ["data_imagenet_cold"] * 2
    startup, random, block = lines
    assert startup["records"] == records and startup["cpu"] and startup["cold"] is False
    assert 0 < startup["first_batch"]["first_batch_after_imports_s"] < \
        startup["first_batch"]["first_batch_s"]
    assert startup["first_batch"]["rss_mb"] > 0
    assert startup["first_batch"]["read_mb_first_batch"] > 0, "LMDB's page faults not counted"
    index = startup["index"]
    assert index["counter"]["records"] == index["listed"]["records"] == records
    # The native library is loaded before the heap is measured: a few keys take well under 1 MB.
    assert all(0 <= i["index_mb"] < 1 and i["seconds"] > 0 for i in index.values())
    assert (random["order"], random["block_records"]) == ("random", 0)
    assert block["order"] == "block" and block["block_records"] >= 16
    assert all(r["images"] >= 40 and r["images_per_s"] > 0 and r["read_mb"] >= 0
               for r in (random, block))


def test_cold_runs_refuse_where_the_page_cache_cannot_be_dropped(monkeypatch):
    import bench_imagenet
    monkeypatch.setattr(bench_imagenet, "drop_caches", lambda: False)
    with pytest.raises(SystemExit, match="needs root"):
        bench_imagenet.main(["--cold-db", "/nonexistent"])
