#!/usr/bin/env python3
"""Writes N JPEGs shaped like ImageNet's (ILSVRC-2012) into its folder layout, for benchmarks
at ImageNet's scale without ImageNet: train/<wnid>/<wnid>_<i>.JPEG (one folder per class,
`crossbow convert imageset --by_folder`), val/ILSVRC2012_val_<i>.JPEG with val.txt
("file label" lines, `crossbow convert imageset ROOT/ LISTFILE DB`), 1,000 classes by default.

Sizes follow ImageNet's: most images have a longer side of 500 px, at 4:3 (the most common),
3:4, 3:2, 1:1 or another ratio; the rest have a longer side between 100 and 700 px; the mean
is near 400 x 350. Pixels are smooth colour fields with shapes, texture and sensor-like noise,
saved at quality 90, so that files (about 90 KB; ImageNet's average is about 110 KB) compress
and decode as photographs do, not as white noise (several times larger, slower to decode).

With --raw-db DB --gib G it writes no files: a DB of about G GiB of raw records instead, as
`crossbow convert imageset --by_folder --shuffle --resize-shorter S` leaves ImageNet's train/
(S = --shorter, 160 by default; 1,000 classes, labels shuffled across the DB, keys
"%08d_<wnid>/<wnid>_<i>.JPEG"), through Crossbow's own writer, metadata and labels.txt included.
Its pixels come from a pool of --pool pictures (raw records do not compress: for I/O the
content does not matter), so a DB larger than memory is written at the disk's rate.
"""
import argparse
import os
import sys
from multiprocessing import Pool

import numpy as np
from PIL import Image, ImageDraw

RATIOS = [(4 / 3, 0.45), (3 / 4, 0.15), (3 / 2, 0.12), (1.0, 0.08), (2 / 3, 0.05), (None, 0.15)]


def image_size(rng):
    """(width, height) drawn from an ImageNet-like distribution."""
    ratios, weights = zip(*RATIOS)
    ratio = ratios[rng.choice(len(ratios), p=weights)]
    if ratio is None:
        ratio = float(np.exp(rng.uniform(np.log(0.5), np.log(2.0))))
    longer = 500 if rng.random() < 0.6 else int(rng.uniform(100, 700))
    if ratio >= 1:
        return longer, max(32, round(longer / ratio))
    return max(32, round(longer * ratio)), longer


def picture(rng, width, height):
    """A photograph-like RGB image: a smooth field, a few shapes and fine noise."""
    grid = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
    base = Image.fromarray(grid).resize((width, height), Image.BICUBIC)
    detail = rng.integers(-40, 41, (height // 6 + 1, width // 6 + 1, 3)).astype(np.int16)
    draw = ImageDraw.Draw(base)
    for _ in range(rng.integers(3, 9)):
        x0, y0 = rng.integers(0, width), rng.integers(0, height)
        box = [x0, y0, x0 + rng.integers(8, width // 2 + 9), y0 + rng.integers(8, height // 2 + 9)]
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
    # Texture at a few pixels' scale, as foliage, fur and fabric have.
    pixels = np.asarray(base, dtype=np.int16) + detail.repeat(6, 0).repeat(6, 1)[:height, :width]
    pixels = pixels + rng.normal(0, 17, pixels.shape).astype(np.int16)
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def wnid(label):
    return f"n{label:08d}"


def write_one(job):
    path, seed, scale = job
    rng = np.random.default_rng(seed)
    width, height = image_size(rng)
    width, height = max(8, round(width * scale)), max(8, round(height * scale))
    picture(rng, width, height).save(path, "JPEG", quality=90)
    return width, height, os.path.getsize(path)


def jobs(out, train, val, classes, seed, scale):
    """(path, seed, scale) of every image, and the val list's lines."""
    for c in range(classes):
        os.makedirs(os.path.join(out, "train", wnid(c)), exist_ok=True)
    os.makedirs(os.path.join(out, "val"), exist_ok=True)
    work, lines = [], []
    for i in range(train):
        c = i % classes
        work.append((os.path.join(out, "train", wnid(c), f"{wnid(c)}_{i // classes}.JPEG"),
                     seed * 1_000_003 + i, scale))
    for i in range(val):
        name = f"ILSVRC2012_val_{i + 1:08d}.JPEG"
        work.append((os.path.join(out, "val", name), seed * 1_000_003 + train + i, scale))
        lines.append(f"{name} {i % classes}\n")
    return work, lines


def raw_pool(count, shorter, seed):
    """`count` pictures of ImageNet-like sizes with the shorter side scaled to `shorter` (rounded
    as the converter rounds), as (height, width, CHW BGR bytes): a raw record's payload."""
    pool = []
    for i in range(count):
        rng = np.random.default_rng(seed * 1_000_003 + i)
        width, height = image_size(rng)
        scale = shorter / min(width, height)
        width, height = (max(1, int(side * scale + 0.5)) for side in (width, height))
        hwc = np.asarray(picture(rng, width, height))
        pool.append((height, width, hwc[:, :, ::-1].transpose(2, 0, 1).tobytes()))
    return pool


def write_raw_db(db, gib, classes, shorter, pool_size, seed, progress=True):
    """About `gib` GiB of raw records into `db` (see the module's doc); the writer's summary."""
    from crossbow import convert
    pool = raw_pool(pool_size, shorter, seed)
    mean_bytes = np.mean([len(p[2]) for p in pool])
    records = max(classes, int(np.ceil(gib * 2**30 / mean_bytes)))
    # The folder order (class by class, file i of the set in class i % classes) shuffled, as
    # `convert --by_folder --shuffle` leaves it.
    counts = np.bincount(np.arange(records) % classes, minlength=classes)
    label_of = np.repeat(np.arange(classes), counts)
    first_of = np.concatenate([[0], np.cumsum(counts)[:-1]])
    order = np.random.default_rng(seed).permutation(records)
    with convert.Writer(db, records, progress=progress,
                        class_names=[wnid(c) for c in range(classes)]) as writer:
        for position, index in enumerate(order.tolist()):
            label = int(label_of[index])
            nth = index - int(first_of[label])
            height, width, data = pool[index % pool_size]
            writer.write(f"{position:08d}_{wnid(label)}/{wnid(label)}_{nth}.JPEG", data,
                         channels=3, height=height, width=width, label=label)
    return writer.summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", help="folder to write (train/, val/, val.txt)")
    parser.add_argument("--train", type=int, default=1_281_167, help="training images")
    parser.add_argument("--val", type=int, default=50_000, help="validation images")
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="sides times this (e.g. 0.1 for many small files fast)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--raw-db", help="write this DB of raw records instead of JPEG files")
    parser.add_argument("--gib", type=float, default=1.0, help="--raw-db: GiB of records")
    parser.add_argument("--shorter", type=int, default=160,
                        help="--raw-db: the records' shorter side (as --resize-shorter)")
    parser.add_argument("--pool", type=int, default=256,
                        help="--raw-db: distinct pictures, reused with different labels")
    args = parser.parse_args(argv)
    if (args.out is None) == (args.raw_db is None):
        parser.error("give an output folder or --raw-db DB, not both")
    if args.raw_db:
        if args.gib <= 0 or args.shorter < 1 or args.pool < 1 or args.classes < 1:
            parser.error("--gib, --shorter, --pool and --classes must be positive")
        summary = write_raw_db(args.raw_db, args.gib, args.classes, args.shorter, args.pool,
                               args.seed)
        size = os.path.getsize(os.path.join(args.raw_db, "data.mdb"))
        print(f"{summary['text']}; {size / 2**30:.2f} GiB data.mdb, "
              f"{size / 2**20 / summary['seconds']:.0f} MiB/s")
        return
    if args.classes < 1 or args.train < args.classes:
        parser.error(f"--train ({args.train}) must be at least --classes ({args.classes})")
    work, lines = jobs(args.out, args.train, args.val, args.classes, args.seed, args.scale)
    with open(os.path.join(args.out, "val.txt"), "w") as f:
        f.writelines(lines)
    sizes = []
    with Pool(args.workers) as pool:
        for done, size in enumerate(pool.imap(write_one, work, chunksize=64), 1):
            sizes.append(size)
            if done % 10000 == 0 or done == len(work):
                print(f"\r{done}/{len(work)} images", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    w, h, b = (np.mean([s[k] for s in sizes]) for k in range(3))
    print(f"wrote {len(work)} JPEGs to {args.out} ({args.train} train in {args.classes} "
          f"classes, {args.val} val): mean {w:.0f} x {h:.0f} px, {b / 1024:.0f} KB, "
          f"{sum(s[2] for s in sizes) / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
