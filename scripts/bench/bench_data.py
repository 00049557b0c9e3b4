#!/usr/bin/env python3
"""Input-pipeline benchmark: images/s per worker core of Crossbow's loader against PyTorch's
DataLoader with torchvision transforms, the same images in the same run, rounds interleaved,
medians reported (a table on stdout, one JSON line per result).

Workloads: CIFAR-10 train from a raw-record LMDB and from an encoded (JPEG) LMDB with
pad 4 / crop 32 / mirror / normalise; Imagenette-160 train from an encoded LMDB to 128 px
random-resized crops with mirror / normalise. Crossbow runs `workers` decode threads; the peer
(--peer-python, scripts/peer/peer.py: the venv of scripts/peer/setup_peer.sh, current PyTorch from PyPI;
named in the output; in its own process, OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE unset; no model, so the peer's channels_last and compile modes do not apply)
runs a DataLoader with `num_workers=workers` over the JPEG folders (an ImageFolder), and for the
raw case over the pixels held in memory as torchvision's CIFAR10 dataset does; its main process
runs one intra-op thread (checked). Both sides skip their first batch and time the same number
of images, and report images/s per worker. LMDBs and
extracted folders are cached under --scratch.

`bench_data.py imagenet [flags]`: the same at ImageNet's shape (scripts/bench/bench_imagenet.py).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "scripts", "peer")]

import peer  # noqa: E402
from crossbow import archives, convert  # noqa: E402
from crossbow.data import ImageDB  # noqa: E402
from crossbow.datasets import preset_statistics  # noqa: E402

MEAN, STD = preset_statistics("imagenet")

PEER = r"""
import json, sys, time
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import datasets, transforms as T
from PIL import Image
spec = json.loads(sys.argv[1])
torch.set_num_threads(1)
norm = [T.ToTensor(), T.Normalize(spec["mean"], spec["std"])]
if spec["kind"] == "imagenette":
    tf = T.Compose([T.RandomResizedCrop(128), T.RandomHorizontalFlip()] + norm)
else:
    tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip()] + norm)
folder = datasets.ImageFolder(spec["folder"], transform=tf)
if spec["kind"] == "cifar_raw":  # pixels in memory, as torchvision.datasets.CIFAR10 holds them
    class Raw(Dataset):
        def __init__(self):
            n = min(len(folder), spec["images"] * 2)
            idx = np.random.default_rng(0).permutation(len(folder))[:n]
            self.x = np.stack([np.asarray(Image.open(folder.samples[i][0]).convert("RGB"))
                               for i in idx])
            self.y = [folder.samples[i][1] for i in idx]
        def __len__(self):
            return len(self.x)
        def __getitem__(self, i):
            return tf(Image.fromarray(self.x[i])), self.y[i]
    data = Raw()
else:
    data = folder
loader = DataLoader(data, batch_size=spec["batch"], shuffle=True, num_workers=spec["workers"])
it = iter(loader)
next(it)  # worker start-up and the first batch are not timed
start, seen = time.perf_counter(), 0
while seen < spec["images"]:
    x, y = next(it)
    seen += len(y)
print(json.dumps({"images": seen, "seconds": time.perf_counter() - start,
                  "threads": torch.get_num_threads()}))
"""


def prepare(scratch, data=None):
    """The LMDBs and JPEG folders of the three workloads, built once from the archives in the
    data folder (`data`: --data-dir)."""
    os.makedirs(scratch, exist_ok=True)
    for dataset in ("cifar10", "imagenette"):
        archives.extract(dataset, scratch, data, log=lambda line: print(line, file=sys.stderr))
    cifar = os.path.join(scratch, "cifar10-jpg", "train")
    nette = os.path.join(scratch, "imagenette2-160", "train")
    work = {"cifar_raw": (cifar, "cifar_raw_lmdb", False),
            "cifar_jpeg": (cifar, "cifar_jpeg_lmdb", True),
            "imagenette": (nette, "imagenette_jpeg_lmdb", True)}
    out = {}
    for kind, (folder, db, encoded) in work.items():
        db = os.path.join(scratch, db)
        if not os.path.exists(os.path.join(db, "data.mdb")):
            convert.image_folders(folder, db, encoded=encoded, shuffle=True, progress=False)
        out[kind] = (folder, db)
    return out


def crossbow_run(kind, db, images, batch, workers):
    options = dict(batch_size=batch, mean=MEAN, std=STD, workers=workers, seed=1, rgb=True)
    if kind == "imagenette":
        options.update(crop=128, random_resized_crop=True)
    else:
        options.update(crop=32, pad=4)
    return timed_rate(ImageDB(db, **options).source, images)


def timed_rate(source, images):
    """Images/s of a loader over `images` images after its first batch (thread start-up)."""
    source.next_batch()
    start, seen = time.perf_counter(), 0
    while seen < images:
        seen += len(source.next_batch()[1])
    return seen / (time.perf_counter() - start)


def peer_run(python, kind, folder, images, batch, workers):
    spec = dict(kind=kind, folder=folder, images=images, batch=batch, workers=workers,
                mean=MEAN, std=STD)
    out = subprocess.run([python, "-c", PEER, json.dumps(spec)], env=peer.env(),
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["threads"] == 1, f"the peer ran {result['threads']} intra-op threads, not 1"
    return result["images"] / result["seconds"]


def main():
    if sys.argv[1:2] == ["imagenet"]:  # ImageNet-shaped data: scripts/bench/bench_imagenet.py
        sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),
                        os.path.join(ROOT, "scripts", "datagen")]
        import bench_imagenet
        return bench_imagenet.main(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--images", type=int, default=4096, help="timed images per run")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1, help="decode workers (cores)")
    parser.add_argument("--scratch", default="/tmp/crossbow_bench_data")
    parser.add_argument("--only", nargs="*", default=["cifar_raw", "cifar_jpeg", "imagenette"])
    peer.add_argument(parser)
    archives.add_argument(parser)
    args = parser.parse_args()
    info = peer.describe(args.peer_python)
    print(peer.banner(info), flush=True)
    try:
        workloads = prepare(args.scratch, args.data_dir)
    except FileNotFoundError as e:  # an archive missing from the data folder
        sys.exit(f"bench_data: {e}")
    rates = {(k, who): [] for k in args.only for who in ("crossbow", "torchvision")}
    for r in range(args.rounds):
        for kind in args.only:
            folder, db = workloads[kind]
            n = args.images // 4 if kind == "imagenette" else args.images
            rates[kind, "crossbow"].append(crossbow_run(kind, db, n, args.batch, args.workers))
            rates[kind, "torchvision"].append(
                peer_run(args.peer_python, kind, folder, n, args.batch, args.workers))
            print(f"round {r + 1}/{args.rounds} {kind}: crossbow "
                  f"{rates[kind, 'crossbow'][-1]:.0f}, torchvision "
                  f"{rates[kind, 'torchvision'][-1]:.0f} images/s", file=sys.stderr)
    print(f"{'workload':<12} {'crossbow img/s/core':>20} {'torchvision img/s/core':>23} "
          f"{'speed-up':>9}")
    for kind in args.only:
        ours = statistics.median(rates[kind, "crossbow"]) / args.workers
        theirs = statistics.median(rates[kind, "torchvision"]) / args.workers
        print(f"{kind:<12} {ours:>20.0f} {theirs:>23.0f} {ours / theirs:>8.2f}x")
        print(json.dumps(dict(bench="data", workload=kind, workers=args.workers,
                              batch=args.batch, rounds=args.rounds,
                              crossbow_images_per_s_per_core=round(ours, 1),
                              torchvision_images_per_s_per_core=round(theirs, 1),
                              speedup=round(ours / theirs, 2), peer=info)))


if __name__ == "__main__":
    main()
