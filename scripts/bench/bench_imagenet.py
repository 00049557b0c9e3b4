"""`scripts/bench/bench_data.py imagenet`: the input pipeline at ImageNet's shape, on the ImageNet-like
JPEGs of scripts/datagen/make_imagenet_like.py (made once under --scratch), against torchvision's
ImageFolder + DataLoader with the same transforms in the same run (the peer Python of
scripts/peer/peer.py; skipped, saying why, where it cannot import torch).

Workloads (images/s per decode core, medians of --rounds), one per storage choice of the guide:
  jpeg-full       original JPEGs -> RandomResizedCrop 224 + flip + normalise, decoded at full
                  resolution (the crop's region only: data/jpeg_region.cc)
  jpeg-reduced    the same with reduced-size JPEG decoding where the crop allows
  jpeg400-reduced JPEGs re-encoded at max side 400 (--max-side 400), as jpeg-reduced
  raw160-S        raw records at shorter side 160 -> RandomResizedCrop S (S = 128, 160, 192)
  raw128-128      raw records at shorter side 128 -> RandomResizedCrop 128
and, for the raw-160 DB and its copies as other writers make them (scripts/datagen/
foreign_dbs.py: Python's lmdb at a map size that is no whole number of pages, and Caffe's
convert_imageset, neither with metadata; skipped, saying why, without the lmdb package), the
start-up line of --startup-db below (page cache kept warm), and with --cold (root: it drops the
page cache) the lines of --cold-db below.

On DBs made beforehand (scripts/datagen/make_imagenet_scale.py), instead of the above:
  --cold-db DB     from a cold page cache, per read order (random, block): images/s of 128 px
                   random-resized crops over --cold-images images, and the MB/s read from disk
  --startup-db DB  (repeatable) a fresh process from a cold cache: seconds to the first batch,
                   peak RSS and bytes read from disk before it; and, each in its own fresh
                   process, the seconds, memory and disk reads of opening the key index, with
                   the DB's metadata (counter keys) and without it (every key listed)
each printed as a JSON line. They drop the page cache (root) unless --warm.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import bench_data
import make_imagenet_like
import peer
from crossbow import convert
from crossbow.data import ImageDB

PEER = r"""
import json, sys, time, torch
from torch.utils.data import DataLoader
from torchvision import datasets, transforms as T
spec = json.loads(sys.argv[1])
torch.set_num_threads(1)
tf = T.Compose([T.RandomResizedCrop(spec["crop"]), T.RandomHorizontalFlip(), T.ToTensor(),
                T.Normalize(spec["mean"], spec["std"])])
loader = DataLoader(datasets.ImageFolder(spec["folder"], transform=tf), batch_size=spec["batch"],
                    shuffle=True, num_workers=spec["workers"],
                    persistent_workers=spec["workers"] > 0)

def epochs():  # as many as the timed images need, as Crossbow's loader runs on
    while True:
        yield from loader

it = epochs()
next(it)
start, seen = time.perf_counter(), 0
while seen < spec["images"]:
    seen += len(next(it)[1])
print(json.dumps({"images": seen, "seconds": time.perf_counter() - start}))
"""

# Run in a fresh process: SPEC (JSON) says the DB and what to measure; the result is a JSON line.
# Bytes read from disk come from /proc/self/io (read_bytes: what this process made the block
# layer read, LMDB's page faults included); the index's memory from RssAnon (the heap, not the
# mapped DB's pages).
MEASURE = r"""
import json, sys, time
start = time.perf_counter()
spec = json.loads(sys.argv[1])

def proc(name, field):
    with open(f"/proc/self/{name}") as f:
        return int(next(l for l in f if l.startswith(field + ":")).split()[1])

def read_mb():
    return proc("io", "read_bytes") / 2**20

from crossbow import _native
from crossbow.data import ImageDB
C = _native.load()
imported, read_imports = time.perf_counter(), read_mb()
out = dict(read_mb_imports=read_imports)
if spec["what"] == "index":
    heap = proc("status", "RssAnon")
    reader = C.LmdbReader(spec["db"], use_meta=spec["use_meta"])
    out.update(seconds=time.perf_counter() - imported, records=len(reader),
               index_mb=(proc("status", "RssAnon") - heap) / 1024,
               read_mb=read_mb() - read_imports)
else:
    db = ImageDB(spec["db"], spec["batch"], preset="imagenet", input_size=128,
                 workers=spec["workers"], read_order=spec["order"])
    db.source.next_batch()
    first = time.perf_counter()
    out.update(first_batch_s=first - start, first_batch_after_imports_s=first - imported,
               read_mb_first_batch=read_mb() - read_imports, block_records=db.block_records)
    seen, before = 0, read_mb()
    while seen < spec["images"]:
        seen += len(db.source.next_batch()[1])
    seconds = time.perf_counter() - first
    out.update(images=seen, seconds=seconds, read_mb=read_mb() - before)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forked parent through exec.
out["rss_mb"] = proc("status", "VmHWM") / 1024
print(json.dumps(out))
"""


def measure(spec, cold):
    """MEASURE's result for `spec` in a fresh process, the page cache dropped first if `cold`."""
    if cold and not drop_caches():
        raise SystemExit("cold-cache runs drop the page cache, which needs root (or --warm)")
    out = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(spec)], capture_output=True,
                         text=True, env={**os.environ, "GLOG_minloglevel": "1"})
    if out.returncode != 0:
        raise RuntimeError(f"measuring {spec} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_runs(db, images, batch, workers, cold):
    """A JSON line per read order: images/s and MB/s read from disk, from a cold cache."""
    for order in ("random", "block"):
        r = measure(dict(what="loader", db=db, order=order, images=images, batch=batch,
                         workers=workers), cold)
        print(json.dumps(dict(bench="data_imagenet_cold", db=db, order=order, cold=cold,
                              cpu=cpu_name(), workers=workers, images=r["images"],
                              images_per_s=r["images"] / r["seconds"], read_mb=r["read_mb"],
                              read_mb_per_s=r["read_mb"] / r["seconds"],
                              block_records=r["block_records"], rss_mb=r["rss_mb"])),
              flush=True)


def startup_runs(db, batch, cold):
    """A JSON line: the first batch (random order) and the key index with and without the
    metadata, each in a fresh process."""
    first = measure(dict(what="loader", db=db, order="random", images=0, batch=batch,
                         workers=1), cold)
    first = {k: first[k] for k in ("first_batch_s", "first_batch_after_imports_s",
                                   "read_mb_first_batch", "read_mb_imports", "rss_mb")}
    index = {name: measure(dict(what="index", db=db, use_meta=use_meta), cold)
             for name, use_meta in (("counter", True), ("listed", False))}
    print(json.dumps(dict(bench="data_imagenet_startup", db=db, cold=cold, cpu=cpu_name(),
                          records=index["listed"]["records"], first_batch=first, index=index)),
          flush=True)


def prepare(scratch, train, scale, workers):
    """The JPEG folders and a DB per storage choice."""
    root = os.path.join(scratch, f"imagenet_like_{train}_{scale}")
    if not os.path.exists(os.path.join(root, "val.txt")):
        make_imagenet_like.main([root, "--train", str(train), "--val", "0", "--scale", str(scale),
                                 "--classes", str(min(1000, train)), "--workers", str(workers)])
    dbs = {"jpeg": dict(encoded=True), "jpeg400": dict(encoded=True, max_side=400),
           "raw160": dict(resize_shorter=160), "raw128": dict(resize_shorter=128)}
    out = {}
    for name, flags in dbs.items():
        db = os.path.join(scratch, f"{name}_{train}_{scale}")
        if not os.path.exists(os.path.join(db, "data.mdb")):
            started = time.perf_counter()
            convert.image_folders(os.path.join(root, "train"), db, shuffle=True, **flags)
            print(f"converted {name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        out[name] = db
    return os.path.join(root, "train"), out


def foreign_copies(db):
    """Copies of `db` as other writers make them ({name: path}, made once), or {} where the
    lmdb package is missing (said on stderr)."""
    try:
        import foreign_dbs
    except ImportError as e:
        print(f"DBs of other writers skipped: {e}", file=sys.stderr)
        return {}
    size = os.path.getsize(os.path.join(db, "data.mdb"))
    writers = {"python-lmdb": lambda src, dst: foreign_dbs.python_lmdb(src, dst, 2 * size + 4097),
               "caffe": foreign_dbs.caffe}
    out = {}
    for name, write in writers.items():
        out[name] = f"{db}-{name}"
        if not os.path.exists(os.path.join(out[name], "data.mdb")):
            write(db, out[name])
    return out


def crossbow_rate(db, crop, images, batch, workers, **options):
    source = ImageDB(db, batch, preset="imagenet", input_size=crop, workers=workers, **options)
    return bench_data.timed_rate(source.source, images)


def peer_rate(python, folder, crop, images, batch, workers):
    spec = dict(folder=folder, crop=crop, images=images, batch=batch, workers=workers,
                mean=bench_data.MEAN, std=bench_data.STD)
    out = subprocess.run([python, "-c", PEER, json.dumps(spec)], env=peer.env(),
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"the peer's DataLoader failed:\n{out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["images"] / result["seconds"]


def cpu_name():
    with open("/proc/cpuinfo") as f:
        return next((line.split(":", 1)[1].strip() for line in f
                     if line.startswith("model name")), "unknown")


def drop_caches():
    """True where the page cache could be dropped (root)."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
        return True
    except OSError:
        return False


def main(argv):
    parser = argparse.ArgumentParser(prog="bench_data.py imagenet",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=20_000, help="images in the data set")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="image sides times this (small images: many records fast)")
    parser.add_argument("--images", type=int, default=1024, help="timed images per run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1, help="decode workers (cores)")
    parser.add_argument("--scratch", default="/tmp/crossbow_bench_imagenet")
    parser.add_argument("--cold", action="store_true",
                        help="also cold-cache throughput per read order (root: drops caches)")
    parser.add_argument("--cold-db", help="only the cold-cache runs, on this DB")
    parser.add_argument("--cold-images", type=int, default=20_000,
                        help="--cold-db: timed images per read order")
    parser.add_argument("--startup-db", action="append", default=[],
                        help="only the start-up runs, on this DB (repeatable)")
    parser.add_argument("--warm", action="store_true",
                        help="--cold-db/--startup-db with the page cache as it is (no root)")
    peer.add_argument(parser)
    args = parser.parse_args(argv)
    if args.cold_db or args.startup_db:
        for db in args.startup_db:
            startup_runs(db, args.batch, not args.warm)
        if args.cold_db:
            cold_runs(args.cold_db, args.cold_images, args.batch, args.workers, not args.warm)
        return
    try:
        info = peer.describe(args.peer_python)
        print(peer.banner(info), flush=True)
    except RuntimeError as e:
        info = None
        print(f"peer skipped: {e}", flush=True)
    folder, dbs = prepare(args.scratch, args.train, args.scale, os.cpu_count())
    runs = {"jpeg-full": (dbs["jpeg"], 224, dict(reduced_decode=False)),
            "jpeg-reduced": (dbs["jpeg"], 224, {}),
            "jpeg400-reduced": (dbs["jpeg400"], 224, {})}
    runs.update({f"raw160-{s}": (dbs["raw160"], s, {}) for s in (128, 160, 192)})
    runs["raw128-128"] = (dbs["raw128"], 128, {})
    rates = {name: [] for name in runs}
    peer_rates = []
    for _ in range(args.rounds):
        for name, (db, crop, options) in runs.items():
            rates[name].append(crossbow_rate(db, crop, args.images, args.batch, args.workers,
                                             **options))
        if info:
            peer_rates.append(peer_rate(args.peer_python, folder, 224, args.images, args.batch,
                                        args.workers))
    def per_core(samples):  # median, min, max images/s per worker core
        return [f(samples) / args.workers for f in (statistics.median, min, max)]

    results = {name: per_core(r) for name, r in rates.items()}
    torchvision = per_core(peer_rates) if peer_rates else None
    print(f"{'workload':<16} {'crossbow img/s/core (min-max)':>30} {'torchvision (min-max)':>24}")
    for name, ours in results.items():
        theirs = torchvision if name.startswith("jpeg-") and torchvision else None
        cell = "{:.0f} ({:.0f}-{:.0f})".format
        print(f"{name:<16} {cell(*ours):>30} {cell(*theirs) if theirs else '-':>24}")
    for db in [dbs["raw160"], *foreign_copies(dbs["raw160"]).values()]:
        startup_runs(db, args.batch, cold=False)
    if args.cold:
        cold_runs(dbs["raw160"], args.images, args.batch, args.workers, cold=True)
    print(json.dumps(dict(bench="data_imagenet", records=args.train, workers=args.workers,
                          cpu=cpu_name(),
                          images_per_s_per_core={k: v[0] for k, v in results.items()},
                          images_per_s_per_core_min_max={k: v[1:] for k, v in results.items()},
                          torchvision_images_per_s_per_core=torchvision and torchvision[0],
                          torchvision_min_max=torchvision and torchvision[1:], peer=info,
                          self_rss_mb=resource.getrusage(
                              resource.RUSAGE_SELF).ru_maxrss / 1024)))
